-- durable_publish(id, name, data, source, plain, runs): publish an event in one statement
-- (docs/sql.md, "Migration 0016 and durable_publish"; docs/guide/events.md).
--
-- Takes the event name's lock shared (pg_advisory_xact_lock_shared of durable_event_lock), then
-- reads the clock: a suspension on a wait for this name takes the lock exclusive before it looks
-- for events it has not seen (durable_suspend_run), so either this statement finds its waiting
-- step or the suspension finds this event, whatever the order of the two commits.
--
-- Inserts the event, on conflict (id) do nothing: a repeated id starts nothing and answers
-- { created: false, name } (the name it was published under) and the runs of `runs` that exist.
-- Otherwise inserts `runs` (one per subscribed workflow, prepared by the engine as start()
-- prepares one: id, workflow, input, version, keys, rate key, priority, deadline), each insert-if-
-- absent on its id; a run neither inserted nor there (its singleton key is held by another run)
-- raises, so the event and every run roll back together. Then answers each waiting event step on
-- this name whose `since` is not after now, whose deadline has not passed and whose `match` the
-- plain data contains (`plain`: the data before sealing, used here only and never stored): in
-- run id order, each run locked first (the run before its steps, docs/sql.md) and answered only
-- while 'waiting' (a run being executed reads the event itself, or its suspension sees it); the
-- step completes with { data, eventId } and the run is made due. Answers { created, name, runs }.

create or replace function durable_publish(
  p_id text, p_name text, p_data jsonb, p_source text, p_plain jsonb, p_runs jsonb
) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz;
  v_name text;
  v_ids text[] := array(select r ->> 'id' from jsonb_array_elements(p_runs) r);
  v_held text;
  v_wait record;
begin
  perform pg_advisory_xact_lock_shared(durable_event_lock(p_name));
  v_now := durable_now();
  insert into durable_app_events (id, name, data, source, created_at)
  values (p_id, p_name, p_data, p_source, v_now)
  on conflict (id) do nothing
  returning name into v_name;
  if not found then
    select name into v_name from durable_app_events where id = p_id;
    return jsonb_build_object('created', false, 'name', v_name, 'runs', durable_publish_runs(v_ids));
  end if;

  with given as (
    select r ->> 'id' as id, r ->> 'workflow' as workflow, r -> 'input' as input, r ->> 'version' as version,
           r ->> 'concurrency_key' as concurrency_key, r ->> 'singleton_key' as singleton_key,
           r ->> 'rate_key' as rate_key, coalesce((r ->> 'priority')::int, 0) as priority,
           (r ->> 'deadline_in_ms')::bigint as deadline_in_ms, n
      from jsonb_array_elements(p_runs) with ordinality as x (r, n)
  )
  insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                            deadline_at, rate_key, priority, created_at, updated_at)
  select id, workflow, input, v_now, concurrency_key, singleton_key, version,
         v_now + deadline_in_ms * interval '1 millisecond', rate_key, priority, v_now, v_now
    from given order by n
  on conflict do nothing;
  select i into v_held from unnest(v_ids) i where not exists (select 1 from durable_runs r where r.id = i) limit 1;
  if v_held is not null then
    raise exception 'durable_publish: run "%" was not started: another run of its workflow holds its singleton key',
      v_held using errcode = 'unique_violation';
  end if;

  for v_wait in
    select s.run_id, s.step_id from durable_steps s
     where s.kind = 'event' and s.status = 'waiting' and s.signal_name = p_name
       and (s.event_wait ->> 'since')::timestamptz <= v_now
       and (s.deadline_at is null or s.deadline_at > v_now)
       and (not (s.event_wait ? 'match') or p_plain @> (s.event_wait -> 'match'))
     order by s.run_id, s.step_id
  loop
    perform 1 from durable_runs where id = v_wait.run_id and status = 'waiting' for update;
    continue when not found;
    update durable_steps set status = 'completed', completed_at = v_now, updated_at = v_now,
                             result = jsonb_build_object('data', p_data, 'eventId', p_id),
                             result_bytes = octet_length(p_plain::text)
     where run_id = v_wait.run_id and step_id = v_wait.step_id and status = 'waiting';
    if found then
      update durable_runs set wake_at = v_now, updated_at = v_now where id = v_wait.run_id;
    end if;
  end loop;
  return jsonb_build_object('created', true, 'name', p_name, 'runs', durable_publish_runs(v_ids));
end
$$;
