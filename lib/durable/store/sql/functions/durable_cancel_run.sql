-- durable_cancel_run(run_id, reason, children): cancel a run that is not terminal, and with
-- children 'cancel' (the default) its non-terminal children, theirs, and so on (docs/sql.md,
-- "durable_cancel_run").
--
-- Each cancelled run's fence moves on, so its owner's next write or heartbeat fails and its
-- abortSignal fires; waits are cleared and the run never advances again; runs waiting on it are
-- made due (durable_wake_waiters). Step rows stay as they are. Descendants are locked and
-- cancelled first, deepest first, then the run (descendant before ancestor, as a child's end
-- locks itself before its parent: docs/sql.md, "Lock order"). Answers 'not_found', 'terminal' or
-- 'cancelled'.
--
-- The cascade sees every child whose insert committed before the cancel did. Before it locks any
-- row it takes the children lock (durable_children_lock) of the run, then of each descendant its
-- walk finds, ancestors first, and walks again until a walk finds none it has not locked. A child
-- is inserted only under its parent's children lock, shared (durable_suspend_run,
-- durable_record_step), so once the cancel holds a run's lock no child of it is inserted until
-- the cancel commits (and then the parent's fence has moved: none is), and every child inserted
-- before is seen by the next walk, a later statement. Without it, a cancel that waited on one
-- child's row missed a child the parent's suspension inserted meanwhile, which then ran under a
-- cancelled parent.

create or replace function durable_cancel_one(p_run_id text, p_reason text, p_by text) returns text
language plpgsql as $$
declare
  v_status text;
  v_now timestamptz := durable_now();
begin
  select status into v_status from durable_runs where id = p_run_id for update;
  if not found then
    return 'not_found';
  end if;
  if v_status in ('completed', 'failed', 'cancelled') then
    return 'terminal';
  end if;
  update durable_runs set
    status = 'cancelled', fence = fence + 1, wake_at = null, waiting_for = null, lease_until = null,
    error = jsonb_build_object('code', 'cancelled', 'message', coalesce(p_reason, 'cancelled'), 'name', 'Cancelled'),
    updated_at = v_now, finished_at = v_now
  where id = p_run_id;
  insert into durable_events (run_id, kind, data)
  values (p_run_id, 'cancel', jsonb_build_object('reason', p_reason, 'from', v_status, 'by', p_by));
  perform durable_wake_waiters(p_run_id, v_now);
  return 'cancelled';
end
$$;

create or replace function durable_cancel_run(p_run_id text, p_reason text, p_children text) returns text
language plpgsql as $$
declare
  v_status text;
  v_child record;
  v_locked text[] := '{}';
  v_new text[];
  v_id text;
begin
  -- Read without a lock: the descendants are locked before the run.
  select status into v_status from durable_runs where id = p_run_id;
  if not found then
    return 'not_found';
  end if;
  if v_status in ('completed', 'failed', 'cancelled') then
    return 'terminal';
  end if;
  if p_children is distinct from 'keep' then
    perform pg_advisory_xact_lock(durable_children_lock(p_run_id));
    loop
      v_new := array(select id from durable_open_descendants(p_run_id, false) t
                      where not (t.id = any (v_locked)) order by t.depth, t.id);
      exit when cardinality(v_new) = 0;
      foreach v_id in array v_new loop
        perform pg_advisory_xact_lock(durable_children_lock(v_id));
      end loop;
      v_locked := v_locked || v_new;
    end loop;
    for v_child in select id from durable_open_descendants(p_run_id, false) t order by t.depth desc, t.id loop
      perform durable_cancel_one(v_child.id, coalesce(p_reason, 'cancelled'), 'parent');
    end loop;
  end if;
  return durable_cancel_one(p_run_id, p_reason, null);
end
$$;

-- The two-argument form (migrations 0001-0007), for instances of those releases during a deploy:
-- it cascades as the default does now.
create or replace function durable_cancel_run(p_run_id text, p_reason text) returns text
language sql as $$
  select durable_cancel_run(p_run_id, p_reason, 'cancel')
$$;
