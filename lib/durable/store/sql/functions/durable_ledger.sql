-- durable_ledger(run_id): a run's step rows as the ledger the engine replays from
-- (docs/sql.md, "durable_ledger").
--
-- A jsonb array ordered by seq with what a replay needs: status, attempt, result, error, wake
-- time, deadline, polls, external key, timestamps, a race's branches and target runs, and an event
-- wait's { match?, since } and name (0016). A result over durable_inline_limit() (64 KiB of
-- JSON text, measured at write time as result_bytes) is left out and marked result_omitted;
-- store/read-step-result.ts reads it when its step is reached. A plain read, planned at each call
-- (a SQL function), used by the claim and by durable_read_run.

create or replace function durable_ledger(p_run_id text) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'step_id', s.step_id, 'seq', s.seq, 'kind', s.kind, 'status', s.status,
           'attempt', s.attempt,
           'result', case when coalesce(s.result_bytes, 0) <= durable_inline_limit() then s.result end,
           'result_omitted', coalesce(s.result_bytes > durable_inline_limit(), false),
           'error', s.error,
           'wake_at', s.wake_at, 'deadline_at', s.deadline_at, 'polls', s.polls,
           'external_key', s.external_key, 'started_at', s.started_at,
           'completed_at', s.completed_at)
         || case when s.branches is not null
                 then jsonb_build_object('branches', s.branches, 'target_runs', to_jsonb(s.target_runs))
                 else '{}'::jsonb end
         -- Read through to_jsonb(s), not s.event_wait: a sql function's body is checked when it is
         -- created, and the set is also created over schemas older than 0016 (an upgrade's test).
         || case when s.kind = 'event'
                 then jsonb_build_object('event_wait', to_jsonb(s) -> 'event_wait', 'signal_name', s.signal_name)
                 else '{}'::jsonb end order by s.seq, s.step_id), '[]'::jsonb)
    from durable_steps s where s.run_id = p_run_id
$$;
