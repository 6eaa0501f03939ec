-- durable_cancel_run(run_id, reason): cancel a run that is not terminal (docs/sql.md,
-- "durable_cancel_run").
--
-- The fence moves on, so the owner's next write or heartbeat fails and its abortSignal fires;
-- waits are cleared and the run never advances again. Step rows stay as they are. Answers
-- 'not_found', 'terminal' or 'cancelled'.

create or replace function durable_cancel_run(p_run_id text, p_reason text) returns text
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
