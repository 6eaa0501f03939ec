-- Patch markers (docs/sql.md, "Migration 0014"; docs/guide/versions.md,
-- "Patching"). A domain's check only: no table, column or function changes.
--
-- `ctx.patched(id)` journals its answer as a receipt of kind 'patch' (step id `patch:<id>`), so the
-- step kind's domain takes one value more. The check is dropped and added again NOT VALID: every
-- stored kind met the narrower check, so the wider one holds for them without the scan of every
-- durable_steps row a validated check would make while migrate() holds the table's lock. New
-- values are checked at every insert and update as before.
alter domain durable_step_kind drop constraint durable_step_kind_check;
alter domain durable_step_kind add constraint durable_step_kind_check
  check (value in ('run', 'tx', 'value', 'sleep', 'signal', 'poll', 'ai', 'invoke', 'start', 'any', 'callback', 'patch'))
  not valid;
