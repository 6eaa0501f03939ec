-- durable_fork_run(source, id, from_step, deadline_ms): a new run `id` of the source's workflow,
-- version and input with the source's receipts before step `from_step` (by seq), in one statement
-- (docs/sql.md, "durable_fork_run"; docs/guide/runs.md, "Forking a run").
--
-- The source is read, never written: a fork is another run. The receipts copied are the step rows
-- before from_step's seq that completed or failed (a failure the body caught replays as one); rows
-- still waiting or running start over in the fork, and so do from_step and everything after it.
-- Each copied row with an external key gets the key of the new run (the same derivation as
-- steps/external-key.ts: "wfe-" and the first 32 hex digits of SHA-256 over run id, NUL, step id),
-- so a provider told the source's key never takes the fork's effect for a repeat. Refused, writing
-- nothing: a source that is gone ('not_found') or compacted ('compacted'), a step it never reached
-- ('no_step'), and a completed `start` or `callback` receipt before from_step ('refused', with the
-- step): the fork would share the source's child run, or hold a callback URL that delivers to the
-- source. A completed invoke, race or signal wait is copied as it is: its receipt is the value
-- the body saw, and the child, delivery or callback it came from stays the source's.
--
-- The new run is pending and due now, with the source's tags and follow-ups (0017: the hooks its
-- end starts, those of the deploy that started the source; metadata starts empty: the body sets
-- it again as it replays), attempts 0 (0012; it was 1 so that its first claim read the copied
-- ledger, which let a fork skip its rate limit: the claim now reads a fork's ledger by
-- forked_from), and forked_from / forked_from_step. Its first claim is a first start, counted and
-- held by its workflow's rate limit like any other. An id that exists
-- answers 'exists' when it is this same fork (idempotent), else 'conflict'; a singleton key held by
-- a run that has not ended answers 'singleton_held' with its holder. Locks the source for share
-- (a receipt being written commits first), then inserts.

create or replace function durable_fork_run(
  p_source text, p_id text, p_from_step text, p_deadline_ms bigint
) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_source durable_runs;
  v_seq integer;
  v_refused durable_steps;
  v_existing durable_runs;
  v_copied integer;
begin
  select * into v_source from durable_runs where id = p_source for share;
  if not found then
    return jsonb_build_object('outcome', 'not_found');
  end if;
  if v_source.compacted_at is not null then
    return jsonb_build_object('outcome', 'compacted');
  end if;
  select seq into v_seq from durable_steps where run_id = p_source and step_id = p_from_step;
  if not found then
    return jsonb_build_object('outcome', 'no_step');
  end if;
  select * into v_refused from durable_steps
   where run_id = p_source and seq < v_seq and status = 'completed' and kind in ('start', 'callback')
   order by seq limit 1;
  if found then
    return jsonb_build_object('outcome', 'refused', 'step', v_refused.step_id, 'kind', v_refused.kind);
  end if;

  insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                            deadline_at, tags, attempts, forked_from, forked_from_step, priority, rate_key,
                            followups)
  values (p_id, v_source.workflow, v_source.input, v_now, v_source.concurrency_key,
          v_source.singleton_key, v_source.version,
          v_now + p_deadline_ms * interval '1 millisecond', v_source.tags, 0, p_source, p_from_step,
          v_source.priority, v_source.rate_key, v_source.followups)
  on conflict do nothing;
  if not found then
    select * into v_existing from durable_runs where id = p_id;
    if not found then
      return jsonb_build_object('outcome', 'singleton_held', 'holder',
        (select id from durable_runs where workflow = v_source.workflow and singleton_key = v_source.singleton_key
            and status in ('pending', 'running', 'waiting') limit 1));
    end if;
    return jsonb_build_object('outcome',
      case when v_existing.forked_from = p_source and v_existing.forked_from_step = p_from_step
           then 'exists' else 'conflict' end);
  end if;

  insert into durable_steps (run_id, step_id, seq, kind, status, attempt, result, error, deadline_at,
                             wake_at, polls, external_key, fence, started_at, completed_at, updated_at,
                             signal_name, result_bytes, branches, target_runs)
  select p_id, s.step_id, s.seq, s.kind, s.status, s.attempt, s.result, s.error, s.deadline_at,
         s.wake_at, s.polls,
         case when s.external_key is not null then
           'wfe-' || left(encode(sha256(convert_to(p_id, 'UTF8') || '\x00'::bytea
                                        || convert_to(s.step_id, 'UTF8')), 'hex'), 32) end,
         0, s.started_at, s.completed_at, v_now, s.signal_name, s.result_bytes, s.branches, s.target_runs
    from durable_steps s
   where s.run_id = p_source and s.seq < v_seq and s.status in ('completed', 'failed');
  get diagnostics v_copied = row_count;

  insert into durable_events (run_id, kind, fence, data)
  values (p_id, 'fork', 0, jsonb_build_object('from', p_source, 'fromStep', p_from_step, 'copied', v_copied));
  return jsonb_build_object('outcome', 'forked', 'copied', v_copied);
end
$$;
