-- durable_answer_race(wait, winner, fence, now): write the outcome of a decided race (an invoke,
-- a waitForAny, a waitForCallback) into its step row, as durable_resolve_waits found it
-- (docs/sql.md, "Races").
--
-- One conditional write of the row (status 'waiting'), so a race is answered once. An invoke
-- completes with the child's { status, output, error } when the child completed; fails with
-- child_run_failed (childId, childStatus, childError) when it failed or was cancelled, or with
-- step_timeout when its timeout came first. Any other race completes with { branch, value }; a
-- winning signal branch takes its delivery.

create or replace function durable_answer_race(
  p_wait durable_steps, p_win jsonb, p_fence bigint, p_now timestamptz
) returns void
language plpgsql as $$
declare
  v_child text := p_wait.target_runs[1];
  v_value jsonb := p_win -> 'value';
  v_result jsonb;
  v_error jsonb;
begin
  if p_wait.kind = 'invoke' and (p_win ->> 'timedOut')::boolean then
    v_error := jsonb_build_object('code', 'step_timeout', 'name', 'StepTimeoutError', 'childId', v_child,
                                  'message', format('child run "%s" did not end within the timeout of step "%s"',
                                                    v_child, p_wait.step_id));
  elsif p_wait.kind = 'invoke' and v_value ->> 'status' <> 'completed' then
    v_error := jsonb_build_object('code', 'child_run_failed', 'name', 'ChildRunFailedError', 'childId', v_child,
                                  'childStatus', v_value ->> 'status', 'childError', v_value -> 'error',
                                  'message', format('child run "%s" %s: %s', v_child, v_value ->> 'status',
                                                    coalesce(v_value -> 'error' ->> 'message', 'no message')));
  elsif p_wait.kind = 'invoke' then
    v_result := v_value;
  elsif (p_win ->> 'timedOut')::boolean then
    v_result := jsonb_build_object('branch', null, 'value', null, 'timedOut', true);
  else
    v_result := jsonb_build_object('branch', p_win -> 'name', 'value', v_value);
  end if;

  update durable_steps set status = case when v_error is null then 'completed' else 'failed' end,
                           result = v_result, error = v_error, result_bytes = octet_length(v_result::text),
                           fence = p_fence, completed_at = p_now, updated_at = p_now
   where run_id = p_wait.run_id and step_id = p_wait.step_id and status = 'waiting';
  if found and p_win ->> 'signal_seq' is not null then
    update durable_signals set taken_by = p_wait.step_id
     where run_id = p_wait.run_id and seq = (p_win ->> 'signal_seq')::bigint and taken_by is null;
  end if;
end
$$;
