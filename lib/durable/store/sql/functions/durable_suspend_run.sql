-- durable_suspend_run(run_id, fence, waits, waiting_for): park a run the owner holds until the
-- earliest of its waits, in one round trip (docs/sql.md, "durable_suspend_run").
--
-- The fence check also parks the run ('waiting', lease cleared, lost_claims reset). New waits are
-- written here, insert-if-absent: a sleep's or signal wait's row is written once and its wake time
-- or deadline never moves; a poll's next wake time, poll count and last error move on with every
-- poll (its deadline never does). The run's wake_at is the earliest wait: a sleep's wake time, a
-- retry's due time, a deadline, or now when an untaken delivery of an awaited name is already in
-- the mailbox; 'infinity' when only a signal can end the wait.
--
-- Locks the run row first. A signal delivery locks it first too, so either it ran before and the
-- wake-time query sees its delivery, or it waits for this commit and finds the run waiting: no
-- wake-up is lost between the two. The owner recorded every step it started before it calls this.

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
