-- durable_event_lock(name): the advisory lock key of an event name (docs/sql.md, "Migration 0016
-- and durable_publish").
--
-- A publish takes it shared, a suspension on a wait for the name exclusive (durable_suspend_run),
-- so a suspension that looks for events it has not seen runs after every publish of the name in
-- flight has committed or rolled back. Keys of two names may collide: they then only wait for
-- each other. Locks nothing itself.

create or replace function durable_event_lock(p_name text) returns bigint
language sql immutable as $$
  select hashtextextended('durable_app_event:' || p_name, 0)
$$;
