-- Signals as a mailbox, and the guards of the second wave (docs/rules.md, rule 16; docs/sql.md).
--
-- Mailbox. Deliveries of one signal name queue per run in arrival order (`seq`). Each wait takes
-- the oldest delivery of its name that no earlier wait took (`taken_by` names the wait's step),
-- so a loop can wait on the same name again and again. A wait's step id may differ from the
-- name it waits for (`waitForSignal(name, { id })`): the name is kept on the step
-- (`signal_name`). A delivery id seen before for the run is a repeat; without one, every call is
-- a delivery. Runs that waited before this migration keep working: their waits wait for the name
-- that is their step id, and a delivery their completed wait answered counts as taken.
--
-- Guards. A heartbeat after the lease ended is refused. A status read tells whether the run is
-- due, so nobody spends a claim on a run that is not. A claim carries step results and signal
-- payloads inline up to 64 KiB; larger ones are read when their step is reached.

alter table durable_signals drop constraint durable_signals_pkey;
alter table durable_signals add column seq bigserial;
alter table durable_signals add primary key (seq);
alter table durable_signals add column taken_by text;
-- Sizes of the JSON text, kept at write time so a claim can leave large values out cheaply
-- (null on rows written before this migration: carried inline, as they always were).
alter table durable_signals add column payload_bytes integer;
create index durable_signals_mailbox on durable_signals (run_id, name, seq) where taken_by is null;

alter table durable_steps add column signal_name text;
alter table durable_steps add column result_bytes integer;
update durable_steps set signal_name = step_id where kind = 'signal';
update durable_signals g set taken_by = s.step_id
  from durable_steps s
 where s.run_id = g.run_id and s.kind = 'signal' and s.step_id = g.name
   and s.status = 'completed' and s.result ? 'payload';

-- Results and payloads up to this many bytes of JSON text travel with a claim.
create function durable_inline_limit() returns integer
language sql immutable as $$ select 65536 $$;

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
           'completed_at', s.completed_at) order by s.seq, s.step_id), '[]'::jsonb)
    from durable_steps s where s.run_id = p_run_id
$$;

-- The oldest deliveries no wait has taken yet, oldest first, at most 100: what a claim carries so
-- that a wait reached in this invocation can take its delivery without parking the run. A payload
-- over the inline limit is marked omitted (the wait parks, and the claim that wakes it takes it).
create function durable_mailbox(p_run_id text) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'seq', g.seq, 'name', g.name,
           'payload', case when coalesce(g.payload_bytes, 0) <= durable_inline_limit() then g.payload end,
           'omitted', coalesce(g.payload_bytes > durable_inline_limit(), false)) order by g.seq), '[]'::jsonb)
    from (select * from durable_signals
           where run_id = p_run_id and taken_by is null
           order by seq limit 100) g
$$;

-- Answers the waits of a run that are due, as the claim that wakes it: a sleep whose wake time
-- passed completes; a signal wait takes the oldest untaken delivery of its name (waits in the
-- order the body reached them), or completes with a timeout once its deadline passed and no
-- delivery is there for it (a delivery that landed first always wins).
create or replace function durable_resolve_waits(p_run_id text, p_fence bigint, p_now timestamptz)
returns void
language plpgsql as $$
declare
  v_wait durable_steps;
  v_signal durable_signals;
begin
  update durable_steps set status = 'completed', fence = p_fence, completed_at = p_now,
                           updated_at = p_now, result = 'null'::jsonb
   where run_id = p_run_id and kind = 'sleep' and status = 'waiting' and wake_at <= p_now;

  for v_wait in
    select * from durable_steps
     where run_id = p_run_id and kind = 'signal' and status = 'waiting'
     order by seq, step_id
  loop
    -- A delivery that landed after the wait's deadline does not answer it (the timeout won).
    select * into v_signal from durable_signals
     where run_id = p_run_id and name = coalesce(v_wait.signal_name, v_wait.step_id) and taken_by is null
       and (v_wait.deadline_at is null or created_at <= v_wait.deadline_at)
     order by seq limit 1;
    if found then
      update durable_signals set taken_by = v_wait.step_id where seq = v_signal.seq;
      update durable_steps set status = 'completed', fence = p_fence, completed_at = p_now,
                               updated_at = p_now,
                               result = jsonb_build_object('payload', v_signal.payload,
                                                           'signalSeq', v_signal.seq),
                               result_bytes = v_signal.payload_bytes
       where run_id = p_run_id and step_id = v_wait.step_id;
    elsif v_wait.deadline_at <= p_now then
      update durable_steps set status = 'completed', fence = p_fence, completed_at = p_now,
                               updated_at = p_now, result = jsonb_build_object('timedOut', true)
       where run_id = p_run_id and step_id = v_wait.step_id;
    end if;
  end loop;
end
$$;

-- As in 0001, with the mailbox instead of one payload per name.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb
) returns jsonb
language plpgsql as $$
declare
  v_workflows text[] := array(select jsonb_array_elements_text(p_workflows));
  v_exclude text[] := array(select jsonb_array_elements_text(coalesce(p_exclude, '[]')));
  v_now timestamptz := durable_now();
  v_run durable_runs;
  v_lost boolean;
begin
  if p_run_id is null then
    select * into v_run from durable_runs
     where status in ('pending', 'running', 'waiting') and wake_at <= v_now
       and workflow = any (v_workflows) and not (id = any (v_exclude))
     order by wake_at
     limit 1
     for update skip locked;
  else
    select * into v_run from durable_runs
     where id = p_run_id and status in ('pending', 'running', 'waiting') and wake_at <= v_now
       and workflow = any (v_workflows)
     for update skip locked;
  end if;
  if not found then
    return null;
  end if;

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
    'steps', case when exists (select 1 from durable_steps where run_id = v_run.id)
                  then durable_ledger(v_run.id) else '[]'::jsonb end,
    'mailbox', case when exists (select 1 from durable_signals where run_id = v_run.id and taken_by is null)
                    then durable_mailbox(v_run.id) else '[]'::jsonb end);
end
$$;

-- As in 0001, plus: a signal wait's receipt takes its delivery (`signal_seq`) in the same
-- statement, and a wait row keeps the name it waits for (`signal_name`). The engine sends the
-- size of the result's JSON text (`result_bytes`): it has the text already, and measuring it here
-- would serialise every result a second time on the hot path.
create or replace function durable_record_step(p_run_id text, p_fence bigint, p_step jsonb) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_step durable_steps;
begin
  update durable_runs set lost_claims = 0, lost_lease_until = null, updated_at = v_now
   where id = p_run_id and fence = p_fence and status = 'running';
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

-- As in 0001; a signal wait keeps the name it waits for, and is due at once when an untaken
-- delivery of that name is already in the mailbox.
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
   where id = p_run_id and fence = p_fence and status = 'running';
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

-- A step body's heartbeat: is the fence still current and the lease still running?
-- Returns 'owned'; 'expired' when this owner's lease ran out (nobody healed the run yet); or the
-- run's status when the owner lost it ('cancelled', 'pending' after a heal, …).
create or replace function durable_heartbeat(p_run_id text, p_fence bigint) returns text
language sql as $$
  select case
           when fence = p_fence and status = 'running' and lease_until > durable_now() then 'owned'
           when fence = p_fence and status = 'running' then 'expired'
           else status
         end
    from durable_runs where id = p_run_id
$$;

-- Deliver a signal into the run's mailbox: a delivery id seen before for the run is a repeat
-- whatever its state now; a terminal run refuses; otherwise the delivery queues behind the
-- others of its name. A run waiting on that name is made due at once.
-- Returns 'not_found' | 'repeat' | 'terminal' | 'delivered'.
create or replace function durable_deliver_signal(
  p_run_id text, p_name text, p_payload jsonb, p_delivery_id text
) returns text
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_run durable_runs;
begin
  -- Lock the run first (see durable_suspend_run): no wake-up is lost between the two.
  select * into v_run from durable_runs where id = p_run_id for update;
  if not found then
    return 'not_found';
  end if;
  if p_delivery_id is not null and exists (
       select 1 from durable_signals where run_id = p_run_id and delivery_id = p_delivery_id) then
    return 'repeat';
  end if;
  if v_run.status in ('completed', 'failed', 'cancelled') then
    return 'terminal';
  end if;

  insert into durable_signals (run_id, name, payload, delivery_id, created_at, payload_bytes)
  values (p_run_id, p_name, p_payload, p_delivery_id, v_now, octet_length(p_payload::text));
  if v_run.status = 'waiting' and exists (
       select 1 from durable_steps
        where run_id = p_run_id and kind = 'signal' and status = 'waiting'
          and coalesce(signal_name, step_id) = p_name) then
    update durable_runs set wake_at = v_now, updated_at = v_now where id = p_run_id;
  end if;
  return 'delivered';
end
$$;

-- As in 0001, plus `due`: whether a claim would take the run now by the database clock (the
-- status route advances only a run that is due, instead of spending a claim to find out).
create or replace function durable_read_run(p_run_id text) returns jsonb
language plpgsql as $$
declare
  v_run durable_runs;
  v_healed boolean := false;
begin
  update durable_runs set
    status = 'pending', fence = fence + 1, wake_at = durable_now(), lease_until = null,
    lost_claims = lost_claims + 1, lost_lease_until = lease_until, updated_at = durable_now()
  where id = p_run_id and status = 'running' and lease_until < durable_now()
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
