-- durable_children_lock(run_id): the advisory lock key that orders a run's child inserts against a
-- cancel of the run (docs/sql.md, "Lock order", "The children lock").
--
-- A statement that inserts a child of the run (durable_suspend_run for an invoke,
-- durable_record_step for ctx.step.start) takes it shared, before any row; a cascading cancel
-- (durable_cancel_run) takes it exclusive for the run and each of its descendants before it locks
-- any row. So either the insert committed before the cancel took the lock, and the cancel's walk,
-- a later statement, sees the child, or the insert waits for the cancel to commit and then finds
-- the parent's fence moved and inserts nothing. Seed 2: never the key of a concurrency key's lock
-- (seed 0) or a rate key's (seed 1).

create or replace function durable_children_lock(p_run_id text) returns bigint
language sql immutable as $$
  select hashtextextended(p_run_id, 2)
$$;
