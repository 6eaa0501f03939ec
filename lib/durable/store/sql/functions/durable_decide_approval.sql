-- durable_decide_approval(run_id, name, actor, approved, reason, quorum, payload): one person's
-- decision on the run's wait for approval signal `name` (docs/sql.md, "durable_decide_approval";
-- docs/guide/approvals.md).
--
-- Locks the run row first, as durable_deliver_signal does, so two decisions on one run queue here
-- and the second sees what the first wrote: exactly one completes the wait. The wait is the run's
-- waiting signal step on `name`; a delivery of `name` already in the mailbox and not taken means
-- an earlier decision completed it ('decided'). The decision is recorded once per actor; a reject,
-- or the approval that brings the distinct approving actors to `quorum`, delivers `payload` (the
-- completing decision, sealed by the engine) into the mailbox and makes a waiting run due at once.
-- Answers { outcome: 'not_found' | 'terminal' | 'not_waiting' | 'decided' | 'repeat_actor' |
-- 'recorded' | 'completed', stepId?, approvals? }.

create or replace function durable_decide_approval(
  p_run_id text, p_name text, p_actor text, p_approved boolean, p_reason jsonb, p_quorum integer,
  p_payload jsonb
) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_run durable_runs;
  v_step_id text;
  v_approvals integer;
begin
  -- Lock the run first (see durable_suspend_run): no wake-up is lost between the two, and racing
  -- decisions are taken one after the other.
  select * into v_run from durable_runs where id = p_run_id for update;
  if not found then
    return jsonb_build_object('outcome', 'not_found');
  end if;
  if v_run.status in ('completed', 'failed', 'cancelled') then
    return jsonb_build_object('outcome', 'terminal');
  end if;
  select step_id into v_step_id from durable_steps
   where run_id = p_run_id and status = 'waiting' and kind = 'signal'
     and coalesce(signal_name, step_id) = p_name
   order by seq limit 1;
  if not found then
    return jsonb_build_object('outcome', 'not_waiting');
  end if;
  if exists (select 1 from durable_signals where run_id = p_run_id and name = p_name and taken_by is null) then
    return jsonb_build_object('outcome', 'decided', 'stepId', v_step_id);
  end if;

  insert into durable_approval_decisions (run_id, step_id, actor, approved, reason, decided_at)
  values (p_run_id, v_step_id, p_actor, p_approved, p_reason, v_now)
  on conflict do nothing;
  if not found then
    return jsonb_build_object('outcome', 'repeat_actor', 'stepId', v_step_id);
  end if;
  select count(*) into v_approvals from durable_approval_decisions
   where run_id = p_run_id and step_id = v_step_id and approved;
  if p_approved and v_approvals < p_quorum then
    return jsonb_build_object('outcome', 'recorded', 'stepId', v_step_id, 'approvals', v_approvals);
  end if;

  insert into durable_signals (run_id, name, payload, delivery_id, created_at, payload_bytes)
  values (p_run_id, p_name, p_payload, null, v_now, octet_length(p_payload::text));
  if v_run.status = 'waiting' then
    update durable_runs set wake_at = v_now, updated_at = v_now where id = p_run_id;
  end if;
  return jsonb_build_object('outcome', 'completed', 'stepId', v_step_id, 'approvals', v_approvals);
end
$$;
