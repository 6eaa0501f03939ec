-- durable_now(): the only clock any durable_* statement reads (docs/sql.md, "durable_now").
--
-- The server's clock plus the shift in the one-row table durable_clock. Tests add to the shift
-- (store/shift-clock.ts, durable.testing.advanceClock); production leaves it at 0, and no
-- application clock ever decides a lease. Declared STABLE although clock_timestamp() is
-- volatile, so that the planner may use `wake_at <= durable_now()` as an index condition (a
-- volatile call would force a scan of every unfinished run). Callers that write several times
-- read it once into a variable (v_now), so all the times one call writes agree.

create or replace function durable_now() returns timestamptz
language sql stable as $$
  select clock_timestamp() + coalesce((select shift from durable_clock), interval '0')
$$;
