-- durable_end_overdue(run_id, now): fail a run that is past its deadline (code
-- `deadline_exceeded`) or was never claimed by its ttl (code `expired`) (docs/sql.md,
-- "Deadlines").
--
-- Called by the claim when it picks such a run, by the status read, and by an owner whose
-- execution reached the deadline. The fence moves on, so nothing its owner still has in flight
-- can write; a `deadline_exceeded` or `expired` event is recorded and the run's waiters are made
-- due (durable_wake_waiters). Answers whether it ended the run.

create or replace function durable_end_overdue(p_run_id text, p_now timestamptz) returns boolean
language plpgsql as $$
declare
  v_run durable_runs;
begin
  update durable_runs r set
    status = 'failed', fence = fence + 1, wake_at = null, waiting_for = null, lease_until = null,
    lost_claims = 0, lost_lease_until = null, updated_at = p_now, finished_at = p_now,
    error = case
      when r.deadline_at <= p_now then jsonb_build_object(
        'code', 'deadline_exceeded', 'name', 'DeadlineExceededError',
        'message', format('the run passed its deadline (%s)', to_char(r.deadline_at at time zone 'UTC',
                                                                      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
      else jsonb_build_object(
        'code', 'expired', 'name', 'RunExpiredError',
        'message', format('the run was not claimed before its ttl ran out (%s)',
                          to_char(r.expire_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
    end
  where id = p_run_id and status not in ('completed', 'failed', 'cancelled')
    and (r.deadline_at <= p_now or (r.expire_at <= p_now and r.attempts = 0))
  returning * into v_run;
  if not found then
    return false;
  end if;
  insert into durable_events (run_id, kind, fence, data)
  values (p_run_id, v_run.error ->> 'code', v_run.fence,
          jsonb_build_object('deadlineAt', v_run.deadline_at, 'expireAt', v_run.expire_at));
  perform durable_wake_waiters(p_run_id, p_now);
  return true;
end
$$;
