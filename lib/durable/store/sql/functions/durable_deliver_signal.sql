-- durable_deliver_signal(run_id, name, payload, delivery_id): deliver a signal into the run's
-- mailbox (docs/sql.md, "durable_deliver_signal").
--
-- Locks the run row first, waiting for it (see durable_suspend_run: no wake-up is lost between the
-- two). A delivery id seen before for the run is a repeat whatever its state now; a terminal run
-- refuses; otherwise the delivery queues behind the others of its name (durable_signals.seq,
-- payload_bytes measured once here), and a run waiting on that name (a signal wait, or a race with
-- a branch on it) is made due at once.
-- Answers 'not_found' | 'repeat' | 'terminal' | 'delivered'.

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
        where run_id = p_run_id and status = 'waiting'
          and ((kind = 'signal' and coalesce(signal_name, step_id) = p_name)
               or (kind = 'any' and branches @> jsonb_build_array(jsonb_build_object('signal', p_name))))) then
    update durable_runs set wake_at = v_now, updated_at = v_now where id = p_run_id;
  end if;
  return 'delivered';
end
$$;
