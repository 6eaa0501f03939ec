-- durable_retry_run(run_id): retry a failed run (docs/sql.md, "durable_retry_run").
--
-- Completed receipts (and so their external keys) stay; a failed poll row is deleted (a timed-out
-- waitFor starts over with a new deadline); every other failed step reopens as a due retry keeping
-- its attempt count. The run is due now under a new fence. A run whose steps retention deleted
-- (compacted_at) is refused with 'compacted': with no receipts it would start over and repeat its
-- effects. The failed child of a failed or still waiting invoke is retried with it (a cancelled
-- child stays cancelled), and the run's deadline and ttl are cleared: a retry is asked for by
-- hand. Answers 'not_found', 'not_failed', 'compacted' or 'retried'.

create or replace function durable_retry_run(p_run_id text) returns text
language plpgsql as $$
declare
  v_run durable_runs;
  v_now timestamptz := durable_now();
begin
  select * into v_run from durable_runs where id = p_run_id for update;
  if not found then
    return 'not_found';
  end if;
  if v_run.status <> 'failed' then
    return 'not_failed';
  end if;
  if v_run.compacted_at is not null then
    return 'compacted';
  end if;
  -- A failed child of a failed invoke is retried too (its invoke reopens below and waits on it),
  -- and so is one an invoke still waits on (the run ended first, e.g. past a deadline its child
  -- inherited).
  perform durable_retry_run(r.id) from durable_runs r
   where r.status = 'failed'
     and r.id in (select unnest(target_runs) from durable_steps
                   where run_id = p_run_id and kind = 'invoke' and status in ('failed', 'waiting'));
  -- A wait that timed out starts over with a new deadline; any other failed step runs again.
  delete from durable_steps where run_id = p_run_id and status = 'failed' and kind = 'poll';
  update durable_steps set status = 'waiting', wake_at = v_now, completed_at = null, updated_at = v_now
   where run_id = p_run_id and status = 'failed';
  update durable_runs set
    status = 'pending', fence = fence + 1, wake_at = v_now, error = null, output = null,
    waiting_for = null, updated_at = v_now, finished_at = null, deadline_at = null, expire_at = null
  where id = p_run_id;
  insert into durable_events (run_id, kind) values (p_run_id, 'retry');
  return 'retried';
end
$$;
