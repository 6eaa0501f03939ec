-- durable_read_run(run_id): read a run for status, healing it first when its lease ran out
-- (docs/sql.md, "durable_read_run").
--
-- A run past its deadline or its ttl is ended first (durable_end_overdue). The heal: the fence moves on (the dead owner can no longer write), the run is due now, and a
-- heal event is recorded. Concurrent readers heal once: the heal is a conditional write on the
-- expired lease, so the others wait for the row, find it pending, and read it. Answers { run,
-- healed, due, steps }, where due says whether a claim would take the run now by the database clock
-- (the status route advances only a run that is due, instead of spending a claim to find out).

create or replace function durable_read_run(p_run_id text) returns jsonb
language plpgsql as $$
declare
  v_run durable_runs;
  v_healed boolean := false;
begin
  -- Past its deadline, or never claimed by its ttl: the read ends it (only a run with either
  -- pays for the statement).
  if exists (select 1 from durable_runs where id = p_run_id
               and (deadline_at is not null or expire_at is not null)) then
    perform durable_end_overdue(p_run_id, durable_now());
  end if;
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
