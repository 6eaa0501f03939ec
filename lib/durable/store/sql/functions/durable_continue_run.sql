-- durable_continue_run(run_id, fence, successor, taken_error, warnings, step): ctx.continueAsNew.
-- Ends the run the owner holds as completed, with `continued_as`, and inserts its successor, in one
-- statement and one transaction under the fence (docs/sql.md, "durable_continue_run"), so a kill
-- anywhere leaves either both or neither, and a stale owner starts nothing.
--
-- `successor` is { id, workflow, input, version, deadline_in_ms } as the engine prepared it (the
-- input checked by the workflow's schema, the id derived from the run's). What carries over is
-- read here from the run's row, under its lock: the concurrency, singleton and rate keys, the
-- priority, the tags, the parent and the follow-ups (0017: the successor carries the run's hooks,
-- and this run's end starts none of them; a run failed as 'taken' starts its onFailure ones). The end is durable_finish_run's (the held-back receipt and
-- the metadata patches ride on it, the runs waiting on this one are woken), the insert
-- durable_insert_child's. The singleton key passes without a window: the end frees it and the
-- insert takes it in the same transaction, so a start racing them waits for the commit and finds
-- the successor holding it.
--
-- Runs waiting on this one (a parent's invoke, a race's run branch) are moved to the successor:
-- their `target_runs` and `branches` name it from now on, so the end of the chain answers them.
-- They are locked as durable_wake_waiters locks them (after the run that ends, in id order).
--
-- Answers 'continued'; 'lost' or 'conflict' as durable_finish_run does (nothing written); or
-- 'taken' when a run already has the successor's id: the run is failed with `taken_error` instead.

create or replace function durable_continue_run(
  p_run_id text, p_fence bigint, p_successor jsonb, p_taken_error jsonb, p_warnings jsonb, p_step jsonb
) returns text
language plpgsql set enable_seqscan = off as $$
declare
  v_now timestamptz;
  v_next text := p_successor ->> 'id';
  v_run durable_runs;
  v_taken boolean;
  v_ended text;
  v_why jsonb;
  v_waiters text[];
begin
  select * into v_run from durable_runs where id = p_run_id;
  if not found then
    return 'lost';
  end if;
  -- The parent's children lock before any row lock, as every child insert takes it ("Lock order"):
  -- a cascading cancel of the parent either sees the successor or moved this run's fence first.
  if v_run.parent_id is not null then
    perform pg_advisory_xact_lock_shared(durable_children_lock(v_run.parent_id));
  end if;
  -- The clock is read after the lock: a wait for it must not let the end pass the owner's lease.
  v_now := durable_now();
  v_taken := exists (select 1 from durable_runs where id = v_next);
  -- A run that continues hands its hooks (followups, 0017) to its successor: the end of the chain
  -- starts them. durable_start_followups skips the run this names, for this transaction only.
  if not v_taken and v_run.followups is not null then
    perform set_config('durable.continuing', p_run_id, true);
  end if;
  v_ended := durable_finish_run(p_run_id, p_fence, case when v_taken then 'failed' else 'completed' end, null,
                                case when v_taken then p_taken_error end, p_warnings, p_step, v_now);
  if not v_taken and v_run.followups is not null then
    perform set_config('durable.continuing', '', true);
  end if;
  if v_ended <> 'finished' then
    return v_ended;
  end if;
  if v_taken then
    return 'taken';
  end if;
  select * into v_run from durable_runs where id = p_run_id;
  v_why := durable_insert_child(v_run.parent_id, p_successor || jsonb_build_object(
    'concurrency_key', v_run.concurrency_key, 'singleton_key', v_run.singleton_key,
    'rate_key', v_run.rate_key, 'priority', v_run.priority, 'tags', to_jsonb(v_run.tags),
    'continued_from', p_run_id, 'followups', v_run.followups), v_now);
  if v_why is not null then
    -- A run of that id committed after the check above (or a holder of the singleton key, which
    -- this run held until its end): roll the end back too; the next claim fails the run as taken.
    raise exception 'durable_continue_run: the successor "%" of run "%" could not be inserted: %',
      v_next, p_run_id, v_why;
  end if;
  update durable_runs set continued_as = v_next where id = p_run_id;
  v_waiters := array(select distinct s.run_id from durable_steps s
                      where s.target_runs @> array[p_run_id] and s.status = 'waiting');
  if cardinality(v_waiters) > 0 then
    perform 1 from durable_runs r where r.id = any (v_waiters) order by r.id for update;
    update durable_steps s set
      target_runs = array_replace(s.target_runs, p_run_id, v_next),
      branches = (select jsonb_agg(case when b ->> 'run' = p_run_id then jsonb_set(b, '{run}', to_jsonb(v_next))
                                        else b end order by n)
                    from jsonb_array_elements(s.branches) with ordinality e(b, n))
     where s.target_runs @> array[p_run_id] and s.status = 'waiting';
  end if;
  return 'continued';
end
$$;
