-- Run lookups by primary key, and a completion that claims the next run (docs/sql.md,
-- "Migration 0006").
--
-- The fenced writes found their run with `id = p_run_id and fence = p_fence and status = 'running'`.
-- In the generic plan plpgsql caches, the planner took durable_runs_status_created for that
-- (`status` and `id` are both columns of it) instead of the primary key, so every receipt read
-- every index entry of status 'running', live and dead: a cost that grew with the runs executing
-- and with those finished since the last vacuum. Each function below is restated with its status
-- test written `status is not distinct from 'running'` (the same test: status is never null),
-- which no index answers, so the primary key is the only way in. Nothing else changes.
--
-- The claim reads a run's ledger only when the run was claimed before (below).
--
-- Chained claims. A loop that goes on claiming after a completion (a tick's, a worker's) sends
-- its next claim in the completion's statement (durable_finish_and_claim): one round trip fewer
-- per run.

-- As in 0002.
create or replace function durable_record_step(p_run_id text, p_fence bigint, p_step jsonb) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_step durable_steps;
begin
  update durable_runs set lost_claims = 0, lost_lease_until = null, updated_at = v_now
   where id = p_run_id and fence = p_fence and status is not distinct from 'running';
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

-- As in 0001.
create or replace function durable_finish_run(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb
) returns text
language plpgsql as $$
declare
  v_recorded jsonb;
begin
  if p_step is not null then
    v_recorded := durable_record_step(p_run_id, p_fence, p_step);
    if not (v_recorded ->> 'owned')::boolean then
      return 'lost';
    end if;
    if (v_recorded ->> 'conflict')::boolean then
      return 'conflict';
    end if;
  end if;
  update durable_runs set
    status = p_status, output = p_output, error = p_error,
    warnings = warnings || coalesce(p_warnings, '[]'::jsonb),
    wake_at = null, waiting_for = null, lease_until = null,
    lost_claims = 0, lost_lease_until = null,
    updated_at = durable_now(), finished_at = durable_now()
  where id = p_run_id and fence = p_fence and status is not distinct from 'running';
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'finish');
    return 'lost';
  end if;
  return 'finished';
end
$$;

-- As in 0001.
create or replace function durable_release_run(p_run_id text, p_fence bigint, p_step_id text) returns boolean
language plpgsql as $$
begin
  update durable_runs set
    status = 'pending', wake_at = durable_now(), lease_until = null, waiting_for = null,
    updated_at = durable_now()
  where id = p_run_id and fence = p_fence and status is not distinct from 'running';
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'release');
    return false;
  end if;
  insert into durable_events (run_id, kind, step_id, fence)
  values (p_run_id, 'budget.yield', p_step_id, p_fence);
  return true;
end
$$;

-- As in 0002.
create or replace function durable_suspend_run(
  p_run_id text, p_fence bigint, p_waits jsonb, p_waiting_for jsonb
) returns boolean
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_wake timestamptz;
begin
  -- Lock the run first: a signal delivery locks it too, so either it sees us waiting (and makes
  -- the run due) or we see its delivery below.
  update durable_runs set status = 'waiting', lease_until = null, waiting_for = p_waiting_for,
                          lost_claims = 0, lost_lease_until = null, updated_at = v_now
   where id = p_run_id and fence = p_fence and status is not distinct from 'running';
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'suspend');
    return false;
  end if;

  insert into durable_steps as s (run_id, step_id, seq, kind, status, attempt, wake_at, deadline_at,
                                  polls, error, fence, signal_name)
  select p_run_id, w ->> 'step_id', (w ->> 'seq')::int, w ->> 'kind', 'waiting', 0,
         v_now + (w ->> 'wake_in_ms')::bigint * interval '1 millisecond',
         v_now + (w ->> 'deadline_in_ms')::bigint * interval '1 millisecond',
         coalesce((w ->> 'polls')::int, 0), w -> 'error', p_fence, w ->> 'signal_name'
    from jsonb_array_elements(p_waits) w
   where w ->> 'kind' is not null
  on conflict (run_id, step_id) do update set
    wake_at = excluded.wake_at, polls = excluded.polls, error = excluded.error,
    fence = excluded.fence, updated_at = v_now
  where s.kind = 'poll' and s.status = 'waiting';

  select min(case
               when s.kind = 'signal' and exists (
                      select 1 from durable_signals g
                       where g.run_id = s.run_id and g.name = coalesce(s.signal_name, s.step_id)
                         and g.taken_by is null)
                 then v_now
               else least(s.wake_at, s.deadline_at)
             end)
    into v_wake
    from durable_steps s
   where s.run_id = p_run_id and s.status = 'waiting'
     and s.step_id in (select w ->> 'step_id' from jsonb_array_elements(p_waits) w);

  update durable_runs set wake_at = coalesce(v_wake, 'infinity') where id = p_run_id;
  return true;
end
$$;

-- As in 0002.
create or replace function durable_read_run(p_run_id text) returns jsonb
language plpgsql as $$
declare
  v_run durable_runs;
  v_healed boolean := false;
begin
  update durable_runs set
    status = 'pending', fence = fence + 1, wake_at = durable_now(), lease_until = null,
    lost_claims = lost_claims + 1, lost_lease_until = lease_until, updated_at = durable_now()
  where id = p_run_id and status is not distinct from 'running' and lease_until < durable_now()
  returning * into v_run;
  if found then
    v_healed := true;
    insert into durable_events (run_id, kind, fence, data)
    values (v_run.id, 'heal', v_run.fence,
            jsonb_build_object('by', 'read', 'leaseExpiredAt', v_run.lost_lease_until));
  else
    select * into v_run from durable_runs where id = p_run_id;
    if not found then
      return null;
    end if;
  end if;
  return jsonb_build_object('run', to_jsonb(v_run), 'healed', v_healed,
                            'due', v_run.status in ('pending', 'running', 'waiting')
                                   and v_run.wake_at <= durable_now(),
                            'steps', durable_ledger(v_run.id));
end
$$;

-- As in 0003.
create or replace function durable_append_stream(
  p_run_id text, p_fence bigint, p_step_id text, p_attempt integer, p_chunks jsonb
) returns bigint
language plpgsql as $$
declare
  v_count integer := jsonb_array_length(p_chunks);
  v_last bigint;
begin
  update durable_runs set stream_seq = stream_seq + v_count
   where id = p_run_id and fence = p_fence and status is not distinct from 'running'
   returning stream_seq into v_last;
  if v_last is null then
    perform durable_note_rejection(p_run_id, p_fence, 'stream');
    return null;
  end if;
  insert into durable_stream_chunks (run_id, seq, step_id, attempt, data)
  select p_run_id, v_last - v_count + c.n, p_step_id, p_attempt, c.data
    from jsonb_array_elements(p_chunks) with ordinality as c (data, n);
  return v_last;
end
$$;
-- As in 0005, but the ledger is read only when the run was claimed before: only an owner writes
-- step rows, so a run's first claim (attempts is 1 after this claim counts itself) has none. The
-- `exists` probe that decided it before ran in the plan plpgsql cached when the session first
-- claimed: made while durable_steps was empty (a new app, a new database), that plan read the
-- whole table on every claim until an analyze replaced it. durable_ledger, a SQL function, is
-- planned at each call, against the table as it is.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb
) returns jsonb
language plpgsql as $$
declare
  v_workflows text[] := array(select jsonb_array_elements_text(p_workflows));
  v_exclude text[] := array(select jsonb_array_elements_text(coalesce(p_exclude, '[]')));
  v_limits jsonb := coalesce(p_limits, '{}');
  v_now timestamptz := durable_now();
  v_run durable_runs;
  v_lost boolean;
  v_limit integer;
  v_tries integer := 0;
begin
  loop
    if p_run_id is null then
      select * into v_run from durable_runs r
       where status in ('pending', 'running', 'waiting') and wake_at <= v_now
         and workflow = any (v_workflows) and not (id = any (v_exclude))
         and durable_version_registered(p_versions, r.workflow, r.version)
         and (r.concurrency_key is null or not (v_limits ? r.workflow)
              or durable_concurrency_used(r.workflow, r.concurrency_key, r.id, v_now)
                 < (v_limits ->> r.workflow)::integer)
       order by wake_at
       limit 1
       for update skip locked;
    else
      select * into v_run from durable_runs r
       where id = p_run_id and status in ('pending', 'running', 'waiting') and wake_at <= v_now
         and workflow = any (v_workflows)
         and durable_version_registered(p_versions, r.workflow, r.version)
       for update skip locked;
    end if;
    if not found then
      return null;
    end if;
    v_limit := (v_limits ->> v_run.workflow)::integer;
    exit when v_run.concurrency_key is null or v_limit is null;
    if v_tries = 0 then
      perform pg_advisory_xact_lock(hashtextextended(v_run.workflow || '/' || v_run.concurrency_key, 0));
    end if;
    exit when (v_tries = 0 or pg_try_advisory_xact_lock(hashtextextended(v_run.workflow || '/' || v_run.concurrency_key, 0)))
          and durable_concurrency_used(v_run.workflow, v_run.concurrency_key, v_run.id, v_now) < v_limit;
    if p_run_id is not null then
      return null;
    end if;
    v_exclude := v_exclude || v_run.id;
    v_tries := v_tries + 1;
    if v_tries >= 20 then
      return null;
    end if;
  end loop;

  -- A running run whose lease ran out lost its claim: its owner may have started steps.
  v_lost := v_run.status = 'running';
  update durable_runs set
    status = 'running',
    fence = fence + 1,
    attempts = attempts + 1,
    lease_until = v_now + p_lease_ms * interval '1 millisecond',
    wake_at = v_now + p_lease_ms * interval '1 millisecond',
    lost_claims = lost_claims + case when v_lost then 1 else 0 end,
    lost_lease_until = case when v_lost then v_run.lease_until else lost_lease_until end,
    updated_at = v_now
  where id = v_run.id
  returning * into v_run;

  if v_lost then
    insert into durable_events (run_id, kind, fence, data)
    values (v_run.id, 'heal', v_run.fence,
            jsonb_build_object('by', 'claim', 'leaseExpiredAt', v_run.lost_lease_until));
  end if;

  if v_run.status = 'running' and v_run.waiting_for is not null then
    perform durable_resolve_waits(v_run.id, v_run.fence, v_now);
    update durable_runs set waiting_for = null where id = v_run.id;
  end if;

  return jsonb_build_object(
    'run', to_jsonb(v_run),
    'healed', v_lost,
    'now', v_now,
    'steps', case when v_run.attempts > 1 then durable_ledger(v_run.id) else '[]'::jsonb end,
    'mailbox', case when exists (select 1 from durable_signals where run_id = v_run.id and taken_by is null)
                    then durable_mailbox(v_run.id) else '[]'::jsonb end);
end
$$;

-- Ends a run as durable_finish_run does and, when it ended, claims the next due run as
-- durable_claim_run does (no run id), in the same round trip and transaction. Answers
-- { finished, next }: `next` is the claim's answer (null: nothing due), absent when the run did
-- not end ('lost', 'conflict'), so that a loop never holds a claim it did not ask for.
create function durable_finish_and_claim(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb, p_workflows jsonb, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb
) returns jsonb
language plpgsql as $$
declare
  v_finished text := durable_finish_run(p_run_id, p_fence, p_status, p_output, p_error, p_warnings, p_step);
begin
  if v_finished <> 'finished' then
    return jsonb_build_object('finished', v_finished);
  end if;
  return jsonb_build_object('finished', v_finished, 'next',
    durable_claim_run(p_workflows, null, p_lease_ms, p_exclude, p_limits, p_versions));
end
$$;
