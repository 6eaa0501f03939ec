-- durable_now(): the only clock any durable_* statement reads (docs/sql.md, "durable_now").
--
-- The server's clock plus the shift in the one-row table durable_clock. Tests add to the shift
-- (store/shift-clock.ts, durable.testing.advanceClock); production leaves it at 0, and no
-- application clock ever decides a lease. Declared STABLE although clock_timestamp() is
-- volatile, so that the planner may use `wake_at <= durable_now()` as an index condition (a
-- volatile call would force a scan of every unfinished run). Callers that write several times
-- read it once into a variable (v_now), so all the times one call writes agree.
--
-- plpgsql, not sql: a sql function that cannot be inlined (this one reads a table) is parsed and
-- planned again at every call, and the hot path calls it once per statement; plpgsql keeps the
-- plan for the session.

create or replace function durable_now() returns timestamptz
language plpgsql stable as $$
begin
  return clock_timestamp() + coalesce((select shift from durable_clock), interval '0');
end
$$;
