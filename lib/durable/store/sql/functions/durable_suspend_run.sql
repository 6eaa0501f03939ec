-- durable_suspend_run(run_id, fence, waits, waiting_for, metadata): park a run the owner holds
-- until the earliest of its waits, in one round trip (docs/sql.md, "durable_suspend_run").
-- `metadata` (0011): ctx.setMetadata's patches since the last write, merged by the fence check's
-- update (null: none). The four-argument form of 0001–0010 stays below, for instances of those
-- releases during a deploy.
--
-- The fence check also parks the run ('waiting', lease cleared, lost_claims reset); past the
-- run's deadline, or after the owner's lease (docs/rules.md, rule 11a), it writes nothing. New waits are written here, insert-if-absent: a sleep's or
-- signal wait's row is written once and its wake time or deadline never moves; a poll's next
-- wake time, poll count and last error move on with every poll (its deadline never does). A race
-- (invoke, waitForAny, waitForCallback) is written with its branches, a sleep branch's wake time
-- fixed now, and the runs it waits on (target_runs). An invoke's child run is inserted here too
-- (insert-if-absent on its id, with parent_id and the earlier of its own and the parent's
-- deadline), so a Promise.all of many invokes starts every child in this one statement. A race
-- on a run that does not exist fails at once (run_not_found; for an invoke whose child could not
-- be inserted, or whose id names a run of another workflow or input, run_state_conflict).
--
-- The run's wake_at is the earliest wait, capped by its deadline: a sleep's wake time, a retry's
-- due time, a deadline, a race's next decision (durable_race_winner), or now when an untaken
-- delivery of an awaited name is already in the mailbox or a race is already decided;
-- 'infinity' when only a signal, a run's end or a callback can end the wait.
--
-- Locks, in order: when it inserts children, the run's children lock, shared
-- (durable_children_lock: a cascading cancel either sees those children or moves the fence
-- first); the runs its races wait on, for share (target before waiter: a run that ends locks
-- itself, then its waiters, so either it sees this run waiting or this statement sees it ended),
-- then the run row. A signal delivery locks the run row first too, so either it ran before and
-- the wake-time query sees its delivery, or it waits for this commit and finds the run waiting.
-- The owner recorded every step it started before it calls this. A wait row's started_at is
-- v_now, the time its wake time and deadline are counted from.
--
-- Event waits (waitForEvent, 0016; docs/sql.md, "Function set 29: waiting for an event"): before
-- any row, the lock of each event name waited on is taken exclusive (durable_event_lock, in name
-- order), so every publish of those names in flight has ended. The run then wakes now when an event
-- of the name was stored since the wait's `since` (and before its deadline) that the pass did not
-- see (`seen_events`, the ids it read): either the publish found the step waiting and answered it,
-- or this statement finds the event. A new event wait is written with its { match?, since }
-- (since "run": the run's created_at).

create or replace function durable_suspend_run(
  p_run_id text, p_fence bigint, p_waits jsonb, p_waiting_for jsonb, p_metadata jsonb
) returns boolean
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_wake timestamptz;
  v_deadline timestamptz;
  v_created timestamptz;
  v_step_ids text[] := array(select w ->> 'step_id' from jsonb_array_elements(p_waits) w);
  v_targets text[];
  v_event_names text[];
  v_event_name text;
begin
  -- Before any row: the locks of the event names waited on, exclusive, in one order; then no
  -- publish of them is in flight (durable_publish takes them shared).
  v_event_names := array(
    select distinct n from (
      select w ->> 'signal_name' as n from jsonb_array_elements(p_waits) w where w ->> 'kind' = 'event'
      union all
      select s.signal_name from durable_steps s
       where s.run_id = p_run_id and s.kind = 'event' and s.status = 'waiting' and s.step_id = any (v_step_ids)
    ) x where n is not null order by n);
  foreach v_event_name in array v_event_names loop
    perform pg_advisory_xact_lock(durable_event_lock(v_event_name));
  end loop;
  -- Before any row: a cascading cancel of this run either sees the children inserted below or
  -- moves the fence first (durable_children_lock; docs/sql.md, "Lock order").
  if exists (select 1 from jsonb_array_elements(p_waits) w where w ? 'start') then
    perform pg_advisory_xact_lock_shared(durable_children_lock(p_run_id));
  end if;
  v_targets := array(
    select distinct t from (
      select jsonb_array_elements_text(w -> 'target_runs') as t from jsonb_array_elements(p_waits) w
       where w ? 'target_runs'
      union all
      select unnest(s.target_runs) from durable_steps s
       where s.run_id = p_run_id and s.status = 'waiting' and s.step_id = any (v_step_ids)
    ) x order by t);
  if cardinality(v_targets) > 0 then
    perform 1 from durable_runs where id = any (v_targets) order by id for share;
  end if;

  update durable_runs set status = 'waiting', lease_until = null, waiting_for = p_waiting_for,
                          lost_claims = 0, lost_lease_until = null, updated_at = v_now,
                          metadata = case when p_metadata is null then metadata else metadata || p_metadata end
   where id = p_run_id and fence = p_fence and status is not distinct from 'running'
     and lease_until > v_now and (deadline_at is null or deadline_at > v_now)
  returning deadline_at, created_at into v_deadline, v_created;
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'suspend');
    return false;
  end if;

  -- Only with an invoke among the waits: the insert names followups (0017), and the set also runs
  -- on a schema before it (tests/postgres/narrow-row-upgrade.test.ts), where plpgsql would fail
  -- to plan it; a suspension without a child plans nothing more.
  if exists (select 1 from jsonb_array_elements(p_waits) w where w ? 'start') then
    insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                              parent_id, deadline_at, followups)
    select w -> 'start' ->> 'id', w -> 'start' ->> 'workflow', w -> 'start' -> 'input', v_now,
           w -> 'start' ->> 'concurrency_key', w -> 'start' ->> 'singleton_key', w -> 'start' ->> 'version',
           p_run_id,
           least(v_now + (w -> 'start' ->> 'deadline_in_ms')::bigint * interval '1 millisecond', v_deadline),
           w -> 'start' -> 'followups'
      from jsonb_array_elements(p_waits) w
     where w ? 'start'
    on conflict do nothing;
  end if;

  insert into durable_steps as s (run_id, step_id, seq, kind, status, attempt, started_at, updated_at,
                                  wake_at, deadline_at, polls, error, fence, signal_name, branches, target_runs)
  select p_run_id, w ->> 'step_id', (w ->> 'seq')::int, w ->> 'kind', 'waiting', 0, v_now, v_now,
         coalesce(v_now + (w ->> 'wake_in_ms')::bigint * interval '1 millisecond', r.wake_at),
         v_now + (w ->> 'deadline_in_ms')::bigint * interval '1 millisecond',
         coalesce((w ->> 'polls')::int, 0), w -> 'error', p_fence, w ->> 'signal_name',
         r.branches,
         case when w ? 'target_runs' then array(select jsonb_array_elements_text(w -> 'target_runs')) end
    from jsonb_array_elements(p_waits) w
    left join lateral (
      select jsonb_agg(case when b ? 'wake_in_ms'
                            then (b - 'wake_in_ms') || jsonb_build_object('wake_at',
                                   v_now + (b ->> 'wake_in_ms')::bigint * interval '1 millisecond')
                            else b end order by n) as branches,
             min(coalesce(v_now + (b ->> 'wake_in_ms')::bigint * interval '1 millisecond',
                          (b ->> 'wake_at')::timestamptz)) as wake_at
        from jsonb_array_elements(w -> 'branches') with ordinality as x (b, n)
    ) r on w ? 'branches'
   where w ->> 'kind' is not null
  on conflict (run_id, step_id) do update set
    wake_at = excluded.wake_at, polls = excluded.polls, error = excluded.error,
    fence = excluded.fence, updated_at = v_now
  where s.kind = 'poll' and s.status = 'waiting';

  -- A new event wait's { match?, since } (since "run": the run's created_at). A statement of its
  -- own, run only when the suspension has event waits: plpgsql plans a statement when it first
  -- runs, so on a schema before 0016 (an upgrade's runs in flight) the others work without it.
  if cardinality(v_event_names) > 0 then
    update durable_steps s
       set event_wait = case when w -> 'event_wait' ->> 'since' = 'run'
                             then jsonb_set(w -> 'event_wait', '{since}', to_jsonb(v_created)) else w -> 'event_wait' end
      from jsonb_array_elements(p_waits) w
     where s.run_id = p_run_id and s.step_id = w ->> 'step_id' and w ->> 'kind' = 'event'
       and s.status = 'waiting' and s.event_wait is null;
  end if;

  -- A race on a run that is not there (or an invoke whose id names someone else's run) fails now.
  update durable_steps s set status = 'failed', completed_at = v_now, updated_at = v_now,
    error = case when w ? 'start' then jsonb_build_object(
                   'code', 'run_state_conflict', 'name', 'RunStateConflictError',
                   'message', format('step "%s" could not start child run "%s": %s', s.step_id,
                                     w -> 'start' ->> 'id',
                                     case when c.id is null then 'another run of its workflow holds its singleton key'
                                          else 'a run with that id exists with another workflow or input' end))
                 else jsonb_build_object('code', 'run_not_found', 'name', 'RunNotFoundError',
                   'message', format('step "%s" waits on run "%s", which does not exist', s.step_id,
                                     (select t from unnest(s.target_runs) t
                                       where not exists (select 1 from durable_runs q where q.id = t) limit 1)))
            end
    from jsonb_array_elements(p_waits) w
    left join durable_runs c on c.id = w -> 'start' ->> 'id'
   where s.run_id = p_run_id and s.step_id = w ->> 'step_id' and s.status = 'waiting'
     and w ? 'target_runs'
     and (exists (select 1 from unnest(s.target_runs) t where not exists (select 1 from durable_runs q where q.id = t))
          or (w ? 'start' and (c.workflow <> w -> 'start' ->> 'workflow' or c.input <> w -> 'start' -> 'input')));

  select min(case
               -- A race failed above is answered now; a completed sleep that holds until its time
               -- (waited in process by an earlier execution) wakes at that time.
               when s.status <> 'waiting' and s.kind in ('invoke', 'any') then v_now
               when s.status <> 'waiting' then least(s.wake_at, s.deadline_at)
               when s.kind = 'signal' and exists (
                      select 1 from durable_signals g
                       where g.run_id = s.run_id and g.name = coalesce(s.signal_name, s.step_id)
                         and g.taken_by is null)
                 then v_now
               -- A race's next decision: now when it is already decided, else its earliest time
               -- (null when only a signal, a run's end or a callback can decide it).
               when s.kind in ('invoke', 'any')
                 then (select case when x.at is not null then greatest(v_now, x.at) end
                         from (select least((durable_race_winner(s.run_id, s.branches, s.deadline_at, 'infinity')
                                             ->> 'at')::timestamptz, s.deadline_at) as at) x)
               else least(s.wake_at, s.deadline_at)
             end)
    into v_wake
    from durable_steps s
   where s.run_id = p_run_id and s.step_id = any (v_step_ids);

  -- An event the pass did not see, stored since a wait's since and before its deadline: due now.
  -- (Two ifs: one condition is one query, planned whole, which would name the table before 0016.)
  if cardinality(v_event_names) > 0 then
    if exists (
         select 1 from durable_steps s
           join durable_app_events e
             on e.name = s.signal_name and e.created_at >= (s.event_wait ->> 'since')::timestamptz
                and (s.deadline_at is null or e.created_at < s.deadline_at)
          where s.run_id = p_run_id and s.step_id = any (v_step_ids) and s.kind = 'event' and s.status = 'waiting'
            and not coalesce((select w -> 'seen_events' from jsonb_array_elements(p_waits) w
                               where w ->> 'step_id' = s.step_id limit 1), '[]'::jsonb) ? e.id) then
      v_wake := v_now;
    end if;
  end if;

  update durable_runs set wake_at = least(coalesce(v_wake, 'infinity'), v_deadline) where id = p_run_id;
  return true;
end
$$;

create or replace function durable_suspend_run(
  p_run_id text, p_fence bigint, p_waits jsonb, p_waiting_for jsonb
) returns boolean
language sql as $$
  select durable_suspend_run(p_run_id, p_fence, p_waits, p_waiting_for, null::jsonb)
$$;
