-- durable_finish_run(run_id, fence, status, output, error, warnings, step): end a run the owner
-- holds, completed with its output or failed with its error (docs/sql.md, "durable_finish_run").
--
-- The receipt of the body's last step, when the engine held it back, rides in the same statement
-- (p_step, through durable_write_receipt under the run row's lock): the completion costs no round
-- trip of its own. Answers 'finished'; 'lost' (the fence moved on: nothing written but a
-- fence.rejected event); or 'conflict' (that step already had another outcome: nothing ended, the
-- run must replay). Past the run's deadline nothing is written ('lost'; durable_end_overdue fails
-- it), nor after the owner's lease by the database clock ('lost'; docs/rules.md, rule 11a). An end
-- makes the runs waiting on this one due (durable_wake_waiters), in the same transaction.
-- A p_step without a step_id carries only ctx.setMetadata's last patches (no step wrote since):
-- the end merges its `metadata` into the run's.
--
-- p_now (function set 25): the time the caller read (durable_finish_and_claim passes one time to
-- the end and to the claim that follows it). durable_wake_waiters is called only when the partial
-- GIN index holds a waiting step on this run: the same lookup it starts with, made here after the
-- end's update locked the row, so the order that keeps every wake-up (its comment) is unchanged,
-- and the call (most of its cost) is skipped for the runs nobody waits on, nearly all of them.
-- `set enable_seqscan = off` for that lookup, as on durable_wake_waiters (its comment): the rest of
-- this function reads and writes by primary key.

create or replace function durable_finish_run(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb, p_now timestamptz
) returns text
language plpgsql set enable_seqscan = off as $$
declare
  v_now timestamptz := p_now;
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
  if exists (select 1 from durable_steps s where s.target_runs @> array[p_run_id] and s.status = 'waiting') then
    perform durable_wake_waiters(p_run_id, v_now);
  end if;
  return 'finished';
end
$$;

-- The seven-argument form (function sets up to 24): the end reads the clock itself.
create or replace function durable_finish_run(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb
) returns text
language sql as $$
  select durable_finish_run(p_run_id, p_fence, p_status, p_output, p_error, p_warnings, p_step, durable_now())
$$;
