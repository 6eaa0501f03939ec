-- durable_finish_run(run_id, fence, status, output, error, warnings, step): end a run the owner
-- holds, completed with its output or failed with its error (docs/sql.md, "durable_finish_run").
--
-- The receipt of the body's last step, when the engine held it back, rides in the same statement
-- (p_step, through durable_write_receipt under the run row's lock): the completion costs no round
-- trip of its own. Answers 'finished'; 'lost' (the fence moved on: nothing written but a
-- fence.rejected event); or 'conflict' (that step already had another outcome: nothing ended, the
-- run must replay). Past the run's deadline nothing is written ('lost'; durable_end_overdue fails
-- it), nor after the owner's lease by the database clock ('lost'; docs/rules.md, rule 11a). An end makes the runs waiting on this one due (durable_wake_waiters), in the same
-- transaction. A p_step without a step_id carries only ctx.setMetadata's last patches (no step
-- wrote since): the end merges its `metadata` into the run's.

create or replace function durable_finish_run(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb
) returns text
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_recorded jsonb;
begin
  if p_step ? 'step_id' then
    -- The fence check and the row's lock for the end's update, then the receipt under it (the
    -- lock taken first, so the end never waits to upgrade a share lock a receipt took).
    perform 1 from durable_runs
     where id = p_run_id and fence = p_fence and status is not distinct from 'running'
       and lease_until > v_now and (deadline_at is null or deadline_at > v_now)
       for no key update;
    if not found then
      perform durable_record_step(p_run_id, p_fence, p_step); -- refused: it notes the late outcome
      return 'lost';
    end if;
    v_recorded := durable_write_receipt(p_run_id, p_fence, p_step, v_now);
    if (v_recorded ->> 'conflict')::boolean then
      return 'conflict';
    end if;
  end if;
  update durable_runs set
    status = p_status, output = p_output, error = p_error,
    metadata = case when p_step ? 'metadata' then metadata || (p_step -> 'metadata') else metadata end,
    warnings = warnings || coalesce(p_warnings, '[]'::jsonb),
    wake_at = null, waiting_for = null, lease_until = null,
    lost_claims = 0, lost_lease_until = null,
    updated_at = v_now, finished_at = v_now
  where id = p_run_id and fence = p_fence and status is not distinct from 'running'
    and lease_until > v_now and (deadline_at is null or deadline_at > v_now);
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'finish');
    return 'lost';
  end if;
  -- Runs waiting on this one (a parent's invoke, a race's run branch) are due in this transaction.
  perform durable_wake_waiters(p_run_id, v_now);
  return 'finished';
end
$$;
