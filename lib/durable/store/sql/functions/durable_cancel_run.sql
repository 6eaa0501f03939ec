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
    for v_child in
      with recursive tree (id, depth) as (
        select id, 1 from durable_runs
         where parent_id = p_run_id and status in ('pending', 'running', 'waiting')
        union
        select r.id, t.depth + 1 from durable_runs r join tree t on r.parent_id = t.id
         where r.status in ('pending', 'running', 'waiting')
      )
      select id, max(depth) as depth from tree group by id order by max(depth) desc, id
    loop
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
