-- durable_insert_child(parent_id, start, now): insert the run a `ctx.step.start` starts, for
-- durable_record_step, which calls it under the parent's fence, holding the parent's children
-- lock, in the statement that records the step (docs/sql.md, "Child runs").
--
-- `start` is { id, workflow, input, version, concurrency_key, singleton_key, deadline_in_ms,
-- rate_key, priority, followups } as the engine prepared it; a successor of ctx.continueAsNew
-- (durable_continue_run) adds `tags` and `continued_from` and carries the run's `followups`, and its parent is the continued run's
-- own (null for a root run). The child is pending and due now, with `parent_id` and the earlier
-- of its own deadline and its parent's. Insert-if-absent on its id: a run that exists under that id with the same workflow and input is the child (a replay after a
-- lost claim finds the one it started). Answers null when the child is there, else why it is not:
-- { reason: 'other_run' } (the id names a run of another workflow or input) or { reason:
-- 'singleton', active_run_id } (another run of the workflow holds its singleton key; a holder
-- that ended meanwhile lets the insert be tried again, up to 5 times).

create or replace function durable_insert_child(p_parent_id text, p_start jsonb, p_now timestamptz) returns jsonb
language plpgsql as $$
declare
  v_existing durable_runs;
  v_holder text;
begin
  for v_try in 1..5 loop
    insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                              parent_id, deadline_at, rate_key, priority, tags, continued_from, followups,
                              created_at, updated_at)
    values (p_start ->> 'id', p_start ->> 'workflow', p_start -> 'input', p_now,
            p_start ->> 'concurrency_key', p_start ->> 'singleton_key', p_start ->> 'version', p_parent_id,
            least(p_now + (p_start ->> 'deadline_in_ms')::bigint * interval '1 millisecond',
                  (select p.deadline_at from durable_runs p where p.id = p_parent_id)),
            p_start ->> 'rate_key', coalesce((p_start ->> 'priority')::integer, 0),
            array(select jsonb_array_elements_text(p_start -> 'tags')), p_start ->> 'continued_from',
            p_start -> 'followups', p_now, p_now)
    on conflict do nothing;
    if found then
      return null;
    end if;
    -- A later statement: it sees a run of that id whose insert committed while this one waited.
    select * into v_existing from durable_runs where id = p_start ->> 'id';
    if found then
      if v_existing.workflow = p_start ->> 'workflow' and v_existing.input = p_start -> 'input' then
        return null;
      end if;
      return jsonb_build_object('reason', 'other_run');
    end if;
    select id into v_holder from durable_runs
     where workflow = p_start ->> 'workflow' and singleton_key = p_start ->> 'singleton_key'
       and status in ('pending', 'running', 'waiting');
    if v_holder is not null then
      return jsonb_build_object('reason', 'singleton', 'active_run_id', v_holder);
    end if;
  end loop;
  return jsonb_build_object('reason', 'singleton', 'active_run_id', null);
end
$$;
