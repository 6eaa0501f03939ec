-- durable_decide_approval_item(run_id, name, key, actor, approved, reason, payload): one person's
-- decision on one item of the run's wait on signal `name`, an item a wing lists (an agent's tool
-- call) under `key` (docs/sql.md, "durable_decide_approval_item"; docs/guide/approvals.md).
--
-- Locks the run row first, as durable_decide_approval does, so racing decisions are taken one after
-- the other: the first records its row under (run_id, key) and delivers `payload` (the decision,
-- sealed by the engine) into the mailbox, making a waiting run due at once; any later one finds
-- that row and answers 'decided'. No quorum: one decision answers an item.
-- Answers { outcome: 'not_found' | 'terminal' | 'not_waiting' | 'decided' | 'completed', stepId? }.

create or replace function durable_decide_approval_item(
  p_run_id text, p_name text, p_key text, p_actor text, p_approved boolean, p_reason jsonb,
  p_payload jsonb
) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_run durable_runs;
  v_step_id text;
begin
  select * into v_run from durable_runs where id = p_run_id for update;
  if not found then
    return jsonb_build_object('outcome', 'not_found');
  end if;
  if v_run.status in ('completed', 'failed', 'cancelled') then
    return jsonb_build_object('outcome', 'terminal');
  end if;
  if exists (select 1 from durable_approval_decisions where run_id = p_run_id and step_id = p_key) then
    return jsonb_build_object('outcome', 'decided');
  end if;
  select step_id into v_step_id from durable_steps
   where run_id = p_run_id and status = 'waiting' and kind = 'signal'
     and coalesce(signal_name, step_id) = p_name
   order by seq limit 1;
  if not found then
    return jsonb_build_object('outcome', 'not_waiting');
  end if;

  insert into durable_approval_decisions (run_id, step_id, actor, approved, reason, decided_at)
  values (p_run_id, p_key, p_actor, p_approved, p_reason, v_now);
  insert into durable_signals (run_id, name, payload, delivery_id, created_at, payload_bytes)
  values (p_run_id, p_name, p_payload, null, v_now, octet_length(p_payload::text));
  if v_run.status = 'waiting' then
    update durable_runs set wake_at = v_now, updated_at = v_now where id = p_run_id;
  end if;
  return jsonb_build_object('outcome', 'completed', 'stepId', v_step_id);
end
$$;
