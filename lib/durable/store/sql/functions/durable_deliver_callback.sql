-- durable_deliver_callback(id, payload, delivery_key): deliver the payload of a callback URL
-- (docs/sql.md, "Callbacks").
--
-- The first delivery wins and is kept; a later one with the same delivery key (Idempotency-Key,
-- webhook-id) is a repeat. Locks the callback's run first, then the callback row, as a signal
-- delivery does (see durable_suspend_run): a wait on the callback written before this finds it
-- delivered, or this finds the wait and makes the run due. Answers 'not_found', 'repeat',
-- 'resolved' (delivered before), 'timed_out' (past its timeout), 'terminal' (its run ended) or
-- 'delivered'.

create or replace function durable_deliver_callback(p_id text, p_payload jsonb, p_delivery_key text)
returns text
language plpgsql as $$
declare
  v_callback durable_callbacks;
  v_run durable_runs;
  v_now timestamptz;
begin
  select * into v_callback from durable_callbacks where id = p_id;
  if not found then
    return 'not_found';
  end if;
  select * into v_run from durable_runs where id = v_callback.run_id for update;
  select * into v_callback from durable_callbacks where id = p_id for update;
  if v_callback.delivered_at is not null then
    return case when p_delivery_key is not null and v_callback.delivery_key = p_delivery_key
                then 'repeat' else 'resolved' end;
  end if;
  v_now := durable_now();
  if v_callback.deadline_at <= v_now then
    return 'timed_out';
  end if;
  if v_run.status in ('completed', 'failed', 'cancelled') then
    return 'terminal';
  end if;
  update durable_callbacks set payload = p_payload, payload_bytes = octet_length(p_payload::text),
                               delivery_key = p_delivery_key, delivered_at = v_now
   where id = p_id;
  if v_run.status = 'waiting' and exists (
       select 1 from durable_steps
        where run_id = v_run.id and status = 'waiting' and kind = 'any'
          and branches @> jsonb_build_array(jsonb_build_object('callback', p_id))) then
    update durable_runs set wake_at = v_now, updated_at = v_now where id = v_run.id;
  end if;
  return 'delivered';
end
$$;
