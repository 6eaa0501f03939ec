-- durable_record_step(run_id, fence, step): record one step outcome under the fence, in one
-- round trip (docs/sql.md, "durable_record_step").
--
-- The fence check first, without rewriting the run row: the row is locked FOR SHARE where id,
-- fence and status 'running' match, and the lock lasts until the receipt commits. A claimer's
-- FOR UPDATE SKIP LOCKED passes a locked row over and a cancel or a heal waits for it, so no fence
-- can move between the check and the receipt. A receipt carrying a `metadata` object
-- (ctx.setMetadata's patches since the last write, merged into the run's metadata: it rides on the
-- receipt, no round trip of its own, and a refused receipt writes none of it; docs/guide/runs.md,
-- "Tags and metadata") updates the row instead, and that update takes the row's lock itself, so
-- two receipts of one run never both hold a share lock and then both wait to update (a deadlock).
-- The first receipt after a lost claim clears lost_claims (from here on this owner knows what
-- ran): the share lock's read tells it so, and durable_clear_lost_claims upgrades the lock only
-- when no other transaction holds the row (SKIP LOCKED), never waiting. A clear so skipped is left
-- to a later receipt or the end: lost_claims may then overcount, which docs/rules.md, rule 7a
-- allows (never undercount). Until function set 25 every receipt ran the update first, a no-op
-- but for those cases, then the share lock: two statements per receipt. No row: the claim was lost; a stale
-- owner's late outcome writes nothing but an event, and the answer is { owned: false, runStatus }
-- so a cancel can be told from a takeover. Past the run's deadline nothing is written
-- (durable_end_overdue fails the run), nor once the owner's lease ended by the database clock
-- (docs/rules.md, rule 11a), though nobody took the run yet.
--
-- Then the receipt (durable_write_receipt). Before function set 17 every receipt updated the run
-- row: a new row version, and an entry in each of its indexes, per step.
--
-- A `ctx.step.start` receipt carries the child it starts (`start`): the child is inserted here,
-- under the fence just checked, before the receipt (durable_insert_child), so a parent cancelled
-- or taken over starts nothing. The parent's children lock is taken shared before anything else
-- (durable_children_lock): a cascading cancel either sees this child or moves the fence first.
-- A child that cannot be inserted (its id names another run, or its singleton key is held) writes
-- no receipt: the answer says why ({ owned: true, conflict: false, not_started }).
--
-- The status test is written `status is not distinct from 'running'` (the same test: status is
-- never null), which no index answers, so the primary key is the only way in: with `status =
-- 'running'` the generic plan plpgsql caches took durable_runs_status_created and read every entry
-- of status 'running' per receipt (docs/sql.md, "Migration 0006"). Every fenced write does the same.

create or replace function durable_record_step(p_run_id text, p_fence bigint, p_step jsonb) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_step durable_steps;
  v_not_started jsonb;
  v_lost boolean;
begin
  if p_step ? 'start' then
    perform pg_advisory_xact_lock_shared(durable_children_lock(p_run_id));
  end if;
  if p_step ? 'metadata' then
    update durable_runs set lost_claims = 0, lost_lease_until = null, updated_at = v_now,
                            metadata = metadata || (p_step -> 'metadata')
     where id = p_run_id and fence = p_fence and status is not distinct from 'running'
       and lease_until > v_now and (deadline_at is null or deadline_at > v_now);
  else
    select lost_claims <> 0 or lost_lease_until is not null into v_lost from durable_runs
     where id = p_run_id and fence = p_fence and status is not distinct from 'running'
       and lease_until > v_now and (deadline_at is null or deadline_at > v_now)
       for share;
    if v_lost then
      perform durable_clear_lost_claims(p_run_id, v_now);
    end if;
  end if;
  if not found then
    -- A stale owner's late outcome: it parks on the recorded one when there is one.
    select * into v_step from durable_steps
     where run_id = p_run_id and step_id = p_step ->> 'step_id' and status in ('completed', 'failed');
    insert into durable_events (run_id, kind, step_id, fence, data)
    values (p_run_id, case when v_step.step_id is null then 'fence.rejected' else 'step.outcome-conflict' end,
            p_step ->> 'step_id', p_fence,
            jsonb_build_object('late', p_step ->> 'status', 'recorded', v_step.status));
    return jsonb_build_object('owned', false,
      'runStatus', (select status from durable_runs where id = p_run_id));
  end if;
  if p_step ? 'start' then
    v_not_started := durable_insert_child(p_run_id, p_step -> 'start', v_now);
    if v_not_started is not null then
      return jsonb_build_object('owned', true, 'conflict', false, 'not_started', v_not_started);
    end if;
  end if;
  return durable_write_receipt(p_run_id, p_fence, p_step, v_now);
end
$$;

-- durable_write_receipt(run_id, fence, step, now): the receipt of durable_record_step, written by a
-- caller that has checked the fence and holds the run row's lock (durable_record_step,
-- durable_finish_run). Answers { owned: true, conflict, step? } as durable_record_step does.
--
-- Insert-if-absent: an existing row is updated only while it is not completed or failed. First
-- write wins: a step already completed keeps its recorded outcome, which is returned with conflict
-- = true (and a step.outcome-conflict event). A signal wait's receipt takes its delivery
-- (signal_seq) in the same statement; a callback's receipt writes its capability row
-- (durable_callbacks: id, schema, deadline) in it too. The engine sends result_bytes, the size of
-- the result's JSON text: it has the text already, and measuring it here would serialise every
-- result a second time on the hot path.

create or replace function durable_write_receipt(p_run_id text, p_fence bigint, p_step jsonb, p_now timestamptz)
returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := p_now;
  v_step durable_steps;
begin
  insert into durable_steps as s (
    run_id, step_id, seq, kind, status, attempt, result, error, wake_at, deadline_at,
    external_key, fence, started_at, completed_at, updated_at, polls, signal_name, result_bytes)
  values (
    p_run_id, p_step ->> 'step_id', (p_step ->> 'seq')::int, p_step ->> 'kind',
    p_step ->> 'status', (p_step ->> 'attempt')::int, p_step -> 'result', p_step -> 'error',
    coalesce((p_step ->> 'wake_at')::timestamptz,
             v_now + (p_step ->> 'wake_in_ms')::bigint * interval '1 millisecond'),
    coalesce((p_step ->> 'deadline_at')::timestamptz,
             v_now + (p_step ->> 'deadline_in_ms')::bigint * interval '1 millisecond'),
    p_step ->> 'external_key', p_fence,
    v_now - coalesce((p_step ->> 'elapsed_ms')::bigint, 0) * interval '1 millisecond',
    case when p_step ->> 'status' in ('completed', 'failed') then v_now end, v_now,
    coalesce((p_step ->> 'polls')::int, 0), p_step ->> 'signal_name',
    (p_step ->> 'result_bytes')::int)
  on conflict (run_id, step_id) do update set
    polls = excluded.polls,
    status = excluded.status, attempt = excluded.attempt, result = excluded.result,
    result_bytes = excluded.result_bytes,
    error = excluded.error, wake_at = excluded.wake_at, fence = excluded.fence,
    started_at = excluded.started_at,
    completed_at = excluded.completed_at, updated_at = excluded.updated_at
  where s.status not in ('completed', 'failed')
  returning * into v_step;

  if found then
    if p_step ? 'signal_seq' then
      update durable_signals set taken_by = v_step.step_id
       where seq = (p_step ->> 'signal_seq')::bigint and run_id = p_run_id and taken_by is null;
    end if;
    if p_step ? 'callback' then
      insert into durable_callbacks (id, run_id, step_id, schema, deadline_at, created_at)
      values (p_step -> 'callback' ->> 'id', p_run_id, v_step.step_id, p_step -> 'callback' -> 'schema',
              v_step.deadline_at, v_now)
      on conflict do nothing;
    end if;
    return jsonb_build_object('owned', true, 'conflict', false);
  end if;

  select * into v_step from durable_steps where run_id = p_run_id and step_id = p_step ->> 'step_id';
  insert into durable_events (run_id, kind, step_id, fence, data)
  values (p_run_id, 'step.outcome-conflict', v_step.step_id, p_fence,
          jsonb_build_object('recorded', v_step.status, 'late', p_step ->> 'status'));
  return jsonb_build_object('owned', true, 'conflict', true, 'step', jsonb_build_object(
    'step_id', v_step.step_id, 'seq', v_step.seq, 'kind', v_step.kind, 'status', v_step.status,
    'attempt', v_step.attempt, 'result', v_step.result, 'error', v_step.error,
    'external_key', v_step.external_key));
end
$$;
