-- Durable runs: the schema.
--
-- A run is one row of durable_runs. Its workflow re-runs from the top on every invocation; every
-- step it completed is a receipt in durable_steps, answered from there on replay.
--
-- Ownership. An invocation claims a due run: the claim bumps `fence` and sets `lease_until` from
-- the database clock. Every write the owner makes afterwards names the fence it was given; a write
-- that matches no row lost its claim to a newer owner (a heal, a reclaim, a cancel) and changes
-- nothing. `wake_at` is when the run may next be claimed: the wake time of a pending or waiting
-- run, and the end of the lease of a running one, so one partial index serves every claim and a
-- run whose owner died is due again the moment its lease runs out.
--
-- Time. durable_now() is the only clock these statements read. It is the server's clock plus a
-- shift that tests move (durable.testing.advanceClock); application clocks never decide a lease.

create table durable_clock (
  singleton boolean primary key default true check (singleton),
  shift interval not null default interval '0'
);
insert into durable_clock default values;

-- STABLE, not VOLATILE: the planner may then use `wake_at <= durable_now()` as an index
-- condition (a volatile call would force a scan of every unfinished run).
create function durable_now() returns timestamptz
language sql stable as $$
  select clock_timestamp() + coalesce((select shift from durable_clock), interval '0')
$$;

create table durable_runs (
  id text primary key check (length(id) between 1 and 255),
  workflow text not null check (length(workflow) between 1 and 255),
  status text not null default 'pending'
    check (status in ('pending', 'running', 'waiting', 'completed', 'failed', 'cancelled')),
  input jsonb not null,
  output jsonb,
  error jsonb,
  wake_at timestamptz,
  waiting_for jsonb,
  lease_until timestamptz,
  fence bigint not null default 0,
  attempts integer not null default 0,
  -- Claims lost (lease ran out without a clean release) since the owner last wrote a receipt:
  -- the steps the next execution reaches before its first new receipt may already have run.
  lost_claims integer not null default 0,
  lost_lease_until timestamptz,
  warnings jsonb not null default '[]',
  created_at timestamptz not null default durable_now(),
  updated_at timestamptz not null default durable_now(),
  finished_at timestamptz,
  check ((status in ('completed', 'failed', 'cancelled')) = (wake_at is null))
);

-- The claim index: only unfinished runs, so claiming stays O(log n) however many runs finished.
create index durable_runs_due on durable_runs (wake_at)
  where status in ('pending', 'running', 'waiting');
create index durable_runs_created on durable_runs (created_at desc, id desc);
create index durable_runs_status_created on durable_runs (status, created_at desc, id desc);

create table durable_steps (
  run_id text not null references durable_runs (id) on delete cascade,
  step_id text not null check (length(step_id) between 1 and 255),
  seq integer not null,
  kind text not null check (kind in ('run', 'tx', 'value', 'sleep', 'signal', 'poll')),
  status text not null check (status in ('running', 'waiting', 'completed', 'failed')),
  attempt integer not null default 0,
  result jsonb,
  error jsonb,
  deadline_at timestamptz,
  wake_at timestamptz,
  polls integer not null default 0,
  external_key text,
  fence bigint not null,
  started_at timestamptz not null default durable_now(),
  completed_at timestamptz,
  updated_at timestamptz not null default durable_now(),
  primary key (run_id, step_id)
);

create table durable_signals (
  run_id text not null references durable_runs (id) on delete cascade,
  name text not null check (length(name) between 1 and 255),
  payload jsonb not null,
  delivery_id text,
  created_at timestamptz not null default durable_now(),
  primary key (run_id, name)
);
create unique index durable_signals_delivery on durable_signals (run_id, delivery_id)
  where delivery_id is not null;

create table durable_events (
  id bigserial primary key,
  run_id text not null,
  kind text not null,
  step_id text,
  fence bigint,
  data jsonb not null default '{}',
  created_at timestamptz not null default durable_now()
);
create index durable_events_run on durable_events (run_id, id);

-- The steps of a run as the ledger the engine replays from.
create function durable_ledger(p_run_id text) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'step_id', s.step_id, 'seq', s.seq, 'kind', s.kind, 'status', s.status,
           'attempt', s.attempt, 'result', s.result, 'error', s.error,
           'wake_at', s.wake_at, 'deadline_at', s.deadline_at, 'polls', s.polls,
           'external_key', s.external_key, 'started_at', s.started_at,
           'completed_at', s.completed_at) order by s.seq, s.step_id), '[]'::jsonb)
    from durable_steps s where s.run_id = p_run_id
$$;

-- Answers the waits of a run that are due, as the claim that wakes it: a sleep whose wake time
-- passed completes; a signal wait completes with the delivered payload, or with a timeout once its
-- deadline passed and no signal landed first (a signal that landed first always wins).
create function durable_resolve_waits(p_run_id text, p_fence bigint, p_now timestamptz) returns void
language sql as $$
  update durable_steps s set
    status = 'completed',
    fence = p_fence,
    completed_at = p_now,
    updated_at = p_now,
    result = case
      when s.kind = 'sleep' then 'null'::jsonb
      when sig.payload is not null then jsonb_build_object('payload', sig.payload)
      else jsonb_build_object('timedOut', true)
    end
  from durable_steps w
  left join durable_signals sig on sig.run_id = w.run_id and sig.name = w.step_id
  where w.run_id = p_run_id and s.run_id = w.run_id and s.step_id = w.step_id
    and w.status = 'waiting'
    and ((w.kind = 'sleep' and w.wake_at <= p_now)
      or (w.kind = 'signal' and (sig.payload is not null or w.deadline_at <= p_now)))
$$;

-- Claim one due run of the given workflows (or exactly p_run_id), in one round trip: pick it with
-- SKIP LOCKED (a row that another claimer or an owner's receipt write holds is skipped, never
-- waited for), bump the fence, take the lease from the database clock, and return the run with
-- its ledger. plpgsql on purpose: the ledger is read by a later statement of this function, whose
-- fresh snapshot sees every receipt committed before we locked the row; a single statement would
-- read it from a snapshot taken before the lock wait.
create function durable_claim_run(
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
    'signals', coalesce((select jsonb_object_agg(name, payload) from durable_signals
                          where run_id = v_run.id), '{}'::jsonb));
end
$$;

-- A stale owner's write matched no row: note it (the owner itself is told and stops quietly).
create function durable_note_rejection(p_run_id text, p_fence bigint, p_write text) returns void
language sql as $$
  insert into durable_events (run_id, kind, fence, data)
  values (p_run_id, 'fence.rejected', p_fence, jsonb_build_object('write', p_write))
$$;

-- Record one step outcome under the fence, in one round trip. First write wins: a step that is
-- already completed keeps its recorded outcome, which is returned with conflict = true.
-- Owned = false means the fence moved on (or the run is no longer running): nothing was written.
-- Writing a new receipt clears lost_claims: from here on this owner knows what ran.
create function durable_record_step(p_run_id text, p_fence bigint, p_step jsonb) returns jsonb
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
    external_key, fence, started_at, completed_at, updated_at, polls)
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
    coalesce((p_step ->> 'polls')::int, 0))
  on conflict (run_id, step_id) do update set
    polls = excluded.polls,
    status = excluded.status, attempt = excluded.attempt, result = excluded.result,
    error = excluded.error, wake_at = excluded.wake_at, fence = excluded.fence,
    started_at = excluded.started_at,
    completed_at = excluded.completed_at, updated_at = excluded.updated_at
  where s.status not in ('completed', 'failed')
  returning * into v_step;

  if found then
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

-- End a run the owner holds: completed with its output, or failed with its error. The receipt of
-- the body's last step, when the engine held it back, rides in the same statement (p_step): the
-- completion costs no round trip of its own. Returns 'finished', 'lost' (the fence moved on) or
-- 'conflict' (that step already had another outcome: nothing ended, the run must replay).
create function durable_finish_run(
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
  where id = p_run_id and fence = p_fence and status = 'running';
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'finish');
    return 'lost';
  end if;
  return 'finished';
end
$$;

-- Give a run back, due now, lease cleared (the budget ran out before the next step). A clean
-- release: lost_claims stays as it is, since this owner wrote no receipt for what it left.
create function durable_release_run(p_run_id text, p_fence bigint, p_step_id text) returns boolean
language plpgsql as $$
begin
  update durable_runs set
    status = 'pending', wake_at = durable_now(), lease_until = null, waiting_for = null,
    updated_at = durable_now()
  where id = p_run_id and fence = p_fence and status = 'running';
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'release');
    return false;
  end if;
  insert into durable_events (run_id, kind, step_id, fence)
  values (p_run_id, 'budget.yield', p_step_id, p_fence);
  return true;
end
$$;

-- Read a run for status, healing it first when its lease ran out: the fence moves on (the dead
-- owner can no longer write), the run is due now, and the heal is recorded. Concurrent readers
-- heal once: the heal is a conditional write on the expired lease.
create function durable_read_run(p_run_id text) returns jsonb
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
                            'steps', durable_ledger(v_run.id));
end
$$;

-- Park a run the owner holds until the earliest of its waits: a sleep's wake time, a retry's due
-- time, a wait's deadline, or at once when an awaited signal has already landed. New waits are
-- written here (insert-if-absent: a stored wake time or deadline never moves), so a suspension
-- is one round trip. The owner recorded every step it started before it calls this.
create function durable_suspend_run(
  p_run_id text, p_fence bigint, p_waits jsonb, p_waiting_for jsonb
) returns boolean
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_wake timestamptz;
begin
  -- Lock the run first: a signal delivery locks it too, so either it sees us waiting (and makes
  -- the run due) or we see its signal below.
  update durable_runs set status = 'waiting', lease_until = null, waiting_for = p_waiting_for,
                          lost_claims = 0, lost_lease_until = null, updated_at = v_now
   where id = p_run_id and fence = p_fence and status = 'running';
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'suspend');
    return false;
  end if;

  -- A sleep's or signal wait's row is written once and never moves; a poll's next wake time,
  -- poll count and last error move on with every poll (its deadline never does).
  insert into durable_steps as s (run_id, step_id, seq, kind, status, attempt, wake_at, deadline_at,
                                  polls, error, fence)
  select p_run_id, w ->> 'step_id', (w ->> 'seq')::int, w ->> 'kind', 'waiting', 0,
         v_now + (w ->> 'wake_in_ms')::bigint * interval '1 millisecond',
         v_now + (w ->> 'deadline_in_ms')::bigint * interval '1 millisecond',
         coalesce((w ->> 'polls')::int, 0), w -> 'error', p_fence
    from jsonb_array_elements(p_waits) w
   where w ->> 'kind' is not null
  on conflict (run_id, step_id) do update set
    wake_at = excluded.wake_at, polls = excluded.polls, error = excluded.error,
    fence = excluded.fence, updated_at = v_now
  where s.kind = 'poll' and s.status = 'waiting';

  select min(case
               when s.kind = 'signal' and exists (select 1 from durable_signals g
                                                  where g.run_id = s.run_id and g.name = s.step_id)
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

-- A step body's heartbeat: is the fence still current?
-- Returns 'owned', or the run's status when the owner lost it ('cancelled', …).
create function durable_heartbeat(p_run_id text, p_fence bigint) returns text
language sql as $$
  select case when fence = p_fence and status = 'running' then 'owned' else status end
    from durable_runs where id = p_run_id
$$;

-- Deliver a signal: first delivery wins, a delivery id seen before is a repeat whatever the run's
-- state now, a terminal run or a wait whose deadline passed refuses it. A run waiting on it is
-- made due at once. Returns 'not_found' | 'repeat' | 'terminal' | 'timed_out' | 'delivered'.
create function durable_deliver_signal(
  p_run_id text, p_name text, p_payload jsonb, p_delivery_id text
) returns text
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_run durable_runs;
  v_wait durable_steps;
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
  if exists (select 1 from durable_signals where run_id = p_run_id and name = p_name) then
    return 'repeat';
  end if;
  select * into v_wait from durable_steps where run_id = p_run_id and step_id = p_name and kind = 'signal';
  if found and (v_wait.status <> 'waiting' or v_wait.deadline_at <= v_now) then
    return 'timed_out';
  end if;

  insert into durable_signals (run_id, name, payload, delivery_id, created_at)
  values (p_run_id, p_name, p_payload, p_delivery_id, v_now);
  if v_run.status = 'waiting' and v_wait.step_id is not null then
    update durable_runs set wake_at = v_now, updated_at = v_now where id = p_run_id;
  end if;
  return 'delivered';
end
$$;

-- Cancel a run that is not terminal: the fence moves on (the owner's next write or heartbeat
-- fails and its abortSignal fires), waits are cleared, and it never advances again.
create function durable_cancel_run(p_run_id text, p_reason text) returns text
language plpgsql as $$
declare
  v_status text;
begin
  select status into v_status from durable_runs where id = p_run_id for update;
  if not found then
    return 'not_found';
  end if;
  if v_status in ('completed', 'failed', 'cancelled') then
    return 'terminal';
  end if;
  update durable_runs set
    status = 'cancelled', fence = fence + 1, wake_at = null, waiting_for = null, lease_until = null,
    error = jsonb_build_object('code', 'cancelled', 'message', coalesce(p_reason, 'cancelled'), 'name', 'Cancelled'),
    updated_at = durable_now(), finished_at = durable_now()
  where id = p_run_id;
  insert into durable_events (run_id, kind, data)
  values (p_run_id, 'cancel', jsonb_build_object('reason', p_reason, 'from', v_status));
  return 'cancelled';
end
$$;

-- Retry a failed run: completed receipts (and so their external keys) stay; failed steps reopen
-- as due retries keeping their attempt count (a timed-out waitFor starts over); the run is due
-- now under a new fence.
create function durable_retry_run(p_run_id text) returns text
language plpgsql as $$
declare
  v_status text;
  v_now timestamptz := durable_now();
begin
  select status into v_status from durable_runs where id = p_run_id for update;
  if not found then
    return 'not_found';
  end if;
  if v_status <> 'failed' then
    return 'not_failed';
  end if;
  -- A wait that timed out starts over with a new deadline; any other failed step runs again.
  delete from durable_steps where run_id = p_run_id and status = 'failed' and kind = 'poll';
  update durable_steps set status = 'waiting', wake_at = v_now, completed_at = null, updated_at = v_now
   where run_id = p_run_id and status = 'failed';
  update durable_runs set
    status = 'pending', fence = fence + 1, wake_at = v_now, error = null, output = null,
    waiting_for = null, updated_at = v_now, finished_at = null
  where id = p_run_id;
  insert into durable_events (run_id, kind) values (p_run_id, 'retry');
  return 'retried';
end
$$;
