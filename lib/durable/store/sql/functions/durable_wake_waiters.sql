-- durable_wake_waiters(run_id, now): a run just ended (completed, failed, cancelled, past its
-- deadline): every run waiting on it (an `invoke` of it, a `waitForAny` with a `run` branch on
-- it) is made due now, in the transaction of the end (docs/sql.md, "Child runs").
--
-- The ended run's row is locked by the caller's end; the waiters are locked after it, in id order
-- (target before waiter: docs/sql.md, "Lock order"). A suspension locks its targets for share
-- before its own row, so either it committed first and its wait row is seen here, or it waits for
-- this commit and then finds the target ended: no wake-up is lost. Only waiting runs are touched;
-- a running waiter finds the end when it suspends again.
--
-- `set enable_seqscan = off`: plpgsql caches a session's plans, and a plan made while durable_steps
-- was analyzed empty (a new install, a bench) read the whole table for every run that ended, since
-- a scan of an empty table costs nothing. The waiters' lookup has an index made for it.

create or replace function durable_wake_waiters(p_run_id text, p_now timestamptz) returns void
language plpgsql set enable_seqscan = off as $$
declare
  -- The waiters, found by the partial GIN index on target_runs; then each run by its primary key
  -- (a status test no index answers: `status = 'waiting'` would read every waiting run's entry
  -- of durable_runs_status_created in the plan plpgsql caches, docs/sql.md "Migration 0006").
  v_waiters text[] := array(select distinct s.run_id from durable_steps s
                             where s.target_runs @> array[p_run_id] and s.status = 'waiting');
begin
  if cardinality(v_waiters) = 0 then
    return;
  end if;
  perform 1 from durable_runs r
   where r.id = any (v_waiters) and r.status is not distinct from 'waiting'
   order by r.id
     for update;
  update durable_runs r set wake_at = p_now, updated_at = p_now
   where r.id = any (v_waiters) and r.status is not distinct from 'waiting' and r.wake_at > p_now;
end
$$;
