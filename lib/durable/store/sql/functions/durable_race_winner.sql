-- durable_race_winner(run_id, branches, deadline, now): which branch of a race (a `waitForAny`,
-- an `invoke`, a `waitForCallback`) is satisfied first by the database clock, as of `now`
-- (docs/sql.md, "Races").
--
-- A branch is satisfied at: a signal's oldest untaken delivery of its name (created_at); a sleep's
-- or date's wake time; a run's end (finished_at); a callback's delivery, or its deadline when it
-- timed out (value null). The earliest at or before `now` wins, ties to the earlier branch; the
-- step's own deadline (an invoke's timeout) wins over branches satisfied later than it. Answers
-- { index, name, value, at, signal_seq } or { timedOut, at }, or null when nothing is satisfied.
-- With now = 'infinity' it answers when the race will next be decided (the suspension's wake time).
-- Reads only; the caller writes the outcome.

create or replace function durable_race_winner(
  p_run_id text, p_branches jsonb, p_deadline timestamptz, p_now timestamptz
) returns jsonb
language plpgsql stable as $$
declare
  v_branch jsonb;
  v_index integer := 0;
  v_at timestamptz;
  v_value jsonb;
  v_seq bigint;
  v_best jsonb;
  v_best_at timestamptz;
begin
  for v_branch in select b from jsonb_array_elements(coalesce(p_branches, '[]'::jsonb)) b loop
    v_at := null;
    v_value := 'null'::jsonb;
    v_seq := null;
    if v_branch ? 'signal' then
      select g.created_at, g.payload, g.seq into v_at, v_value, v_seq from durable_signals g
       where g.run_id = p_run_id and g.name = v_branch ->> 'signal' and g.taken_by is null
       order by g.seq limit 1;
    elsif v_branch ? 'wake_at' then
      v_at := (v_branch ->> 'wake_at')::timestamptz;
    elsif v_branch ? 'run' then
      select r.finished_at, jsonb_build_object('status', r.status, 'output', r.output, 'error', r.error)
        into v_at, v_value
        from durable_runs r
       where r.id = v_branch ->> 'run' and r.status not in ('pending', 'running', 'waiting');
    elsif v_branch ? 'callback' then
      select coalesce(c.delivered_at, c.deadline_at), coalesce(c.payload, 'null'::jsonb) into v_at, v_value
        from durable_callbacks c where c.id = v_branch ->> 'callback';
    end if;
    if v_at is not null and v_at <= p_now and (v_best_at is null or v_at < v_best_at) then
      v_best_at := v_at;
      v_best := jsonb_build_object('index', v_index, 'name', v_branch ->> 'name', 'value', v_value,
                                   'at', v_at, 'signal_seq', v_seq);
    end if;
    v_index := v_index + 1;
  end loop;
  if p_deadline is not null and p_deadline <= p_now and (v_best_at is null or p_deadline < v_best_at) then
    return jsonb_build_object('timedOut', true, 'at', p_deadline);
  end if;
  return v_best;
end
$$;
