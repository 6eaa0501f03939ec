-- durable_heartbeat(run_id, fence): a step body's heartbeat (docs/sql.md, "durable_heartbeat").
--
-- Answers 'owned' while the fence is current and the lease still runs by the database clock;
-- 'expired' when this owner's lease ran out and nobody healed the run yet; 'deadline' once the run
-- passed its deadline (the owner writes nothing more); otherwise the run's
-- status ('cancelled', 'pending' after a heal, ...), null when the run is gone. Locks nothing and
-- writes nothing: the lease already covers the invocation.

create or replace function durable_heartbeat(p_run_id text, p_fence bigint) returns text
language sql as $$
  select case
           when fence = p_fence and status = 'running' and deadline_at <= durable_now() then 'deadline'
           when fence = p_fence and status = 'running' and lease_until > durable_now() then 'owned'
           when fence = p_fence and status = 'running' then 'expired'
           else status
         end
    from durable_runs where id = p_run_id
$$;
