-- durable_release_rate_holds(workflows, rates, cap): makes due again the runs a rate limit held
-- under another limit than the one registered now (docs/sql.md, "Flow control";
-- docs/guide/flow-control.md, "Rate limits"), up to p_cap of them; answers how many.
--
-- A held run's slot follows the limit it was held under (rate_hold, '<limit>/<periodMs>', 0012). A
-- deploy that raises the limit, shortens its period or removes it would otherwise leave the runs
-- at slots computed for the old one, hours away. For each of the instance's workflows, its runs
-- held under another limit (any, when it has none now; held before 0012, rate_hold null) are one
-- to three ranges of durable_runs_rate_holds: an index probe each when there are none. Released,
-- a run is due at its creation time (so the held runs keep their order among themselves) with no
-- slot, and the next claim admits it, or holds it again, under the limit registered now. A run
-- another transaction holds is skipped (a claimer's pick), never waited for. Locks the runs it
-- releases.

create or replace function durable_release_rate_holds(p_workflows jsonb, p_rates jsonb, p_cap integer)
returns integer
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_released integer;
begin
  with registered as (
    select w.name, (p_rates -> w.name ->> 'limit') || '/' || (p_rates -> w.name ->> 'periodMs') as hold
      from jsonb_array_elements_text(p_workflows) w(name)),
  stale as (
    select r.id from registered g
      cross join lateral (
        select id from durable_runs
         where workflow = g.name and rate_slot_at is not null and attempts = 0 and wake_at is not null
           and (g.hold is null or rate_hold is null or rate_hold < g.hold or rate_hold > g.hold)
         limit p_cap) r
     limit p_cap),
  locked as (
    -- The test again under the lock: a run claimed since the scan (attempts 1) is left alone.
    select id from durable_runs
     where id in (select id from stale) and rate_slot_at is not null and attempts = 0 and wake_at is not null
       for update skip locked)
  update durable_runs r set wake_at = least(r.created_at, v_now), rate_slot_at = null, rate_hold = null,
                            updated_at = v_now
    from locked
   where r.id = locked.id;
  get diagnostics v_released = row_count;
  return v_released;
end
$$;
