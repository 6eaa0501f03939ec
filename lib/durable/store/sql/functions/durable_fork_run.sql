-- durable_fork_run(source, id, from_step, deadline_ms, overrides, reason): a new run `id` of the
-- source's workflow, version and input with the source's receipts before step `from_step` (by seq),
-- and edited receipts for the steps `overrides` names, in one statement (docs/sql.md,
-- "durable_fork_run"; docs/guide/runs.md, "Forking a run"; docs/guide/edit-and-resume.md).
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

-- Overrides (edit and resume, docs/guide/edit-and-resume.md): a jsonb array of { step, result,
-- bytes }, the result already checked and sealed by the engine. Each step must be a row of the
-- source (any seq, any status) of kind run, tx or value, else 'bad_override' with the step and why,
-- writing nothing: checked here, under the source's share lock, so a source that changes between
-- the engine's checks and the fork cannot slip a step past them. The fork holds each as a completed
-- receipt with that result (a copied row's result replaced; a row at or after from_step, not
-- copied otherwise, inserted with the source's seq), and the timeline a 'step.edited' event per
-- step with the reason (sealed by the engine under the fork's id, or null).

create or replace function durable_fork_run(
  p_source text, p_id text, p_from_step text, p_deadline_ms bigint, p_overrides jsonb, p_reason text
) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_source durable_runs;
  v_seq integer;
  v_refused durable_steps;
  v_existing durable_runs;
  v_copied integer;
  v_bad record;
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
  select o.step, s.kind into v_bad
    from jsonb_to_recordset(coalesce(p_overrides, '[]'::jsonb)) as o(step text, result jsonb, bytes integer)
    left join durable_steps s on s.run_id = p_source and s.step_id = o.step
   where s.kind is null or s.kind not in ('run', 'tx', 'value')
   limit 1;
  if found then
    return jsonb_build_object('outcome', 'bad_override', 'step', v_bad.step, 'kind', v_bad.kind);
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
  select p_id, s.step_id, s.seq, s.kind,
         case when o.step is null then s.status else 'completed' end, s.attempt,
         case when o.step is null then s.result else o.result end,
         case when o.step is null then s.error end, s.deadline_at,
         case when o.step is null then s.wake_at end, s.polls,
         case when s.external_key is not null then
           'wfe-' || left(encode(sha256(convert_to(p_id, 'UTF8') || '\x00'::bytea
                                        || convert_to(s.step_id, 'UTF8')), 'hex'), 32) end,
         0, s.started_at, case when o.step is null then s.completed_at else v_now end, v_now, s.signal_name,
         case when o.step is null then s.result_bytes else o.bytes end, s.branches, s.target_runs
    from durable_steps s
    left join jsonb_to_recordset(coalesce(p_overrides, '[]'::jsonb)) as o(step text, result jsonb, bytes integer)
      on o.step = s.step_id
   where s.run_id = p_source
     and ((s.seq < v_seq and s.status in ('completed', 'failed')) or o.step is not null);
  get diagnostics v_copied = row_count;

  insert into durable_events (run_id, kind, fence, data)
  values (p_id, 'fork', 0, jsonb_build_object('from', p_source, 'fromStep', p_from_step, 'copied', v_copied,
                                             'edited', jsonb_array_length(coalesce(p_overrides, '[]'::jsonb))));
  insert into durable_events (run_id, kind, step_id, fence, data)
  select p_id, 'step.edited', o.step, 0, jsonb_build_object('from', p_source, 'reason', p_reason)
    from rows from (jsonb_to_recordset(coalesce(p_overrides, '[]'::jsonb)) as (step text)) with ordinality as o(step, n)
   order by o.n;
  return jsonb_build_object('outcome', 'forked', 'copied', v_copied);
end
$$;

-- The four-argument form, called by the release before overrides: a fork without them.
create or replace function durable_fork_run(
  p_source text, p_id text, p_from_step text, p_deadline_ms bigint
) returns jsonb
language sql as $$
  select durable_fork_run(p_source, p_id, p_from_step, p_deadline_ms, null::jsonb, null::text)
$$;
