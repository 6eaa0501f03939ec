-- durable_release_run(run_id, fence, step_id): give a run back, due now, lease cleared: the next
-- step did not fit the budget, or the body's last receipt met an outcome recorded first
-- (docs/sql.md, "durable_release_run").
--
-- The fence check and the release in one update, then a budget.yield event naming the step. A
-- clean release: lost_claims stays as it is, since this owner wrote no receipt for what it left.
-- Past the run's deadline nothing is written (durable_end_overdue fails it), nor after the owner's
-- lease by the database clock (docs/rules.md, rule 11a): the lease is left to be taken.

create or replace function durable_release_run(p_run_id text, p_fence bigint, p_step_id text) returns boolean
language plpgsql as $$
begin
  update durable_runs set
    status = 'pending', wake_at = durable_now(), lease_until = null, waiting_for = null,
    updated_at = durable_now()
  where id = p_run_id and fence = p_fence and status is not distinct from 'running'
    and lease_until > durable_now() and (deadline_at is null or deadline_at > durable_now());
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'release');
    return false;
  end if;
  insert into durable_events (run_id, kind, step_id, fence)
  values (p_run_id, 'budget.yield', p_step_id, p_fence);
  return true;
end
$$;
