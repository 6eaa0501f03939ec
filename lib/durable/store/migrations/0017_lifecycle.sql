-- Lifecycle hooks and outbound webhooks (docs/sql.md, "Migration 0017 and function set 29"; docs/guide/lifecycle.md).
-- One nullable column: `followups`, the runs a run's end starts (its workflow's onComplete and
-- onFailure, the instance's webhooks), set when the run is inserted and read only by the trigger
-- durable_runs_followups (created with its function, durable_start_followups, by the function set:
-- a migration holds no function, and a trigger needs its function to exist). It names targets
-- only, never a secret. Null for nearly every run: the trigger's WHEN reads it first, so a run
-- without hooks pays one null test per status change. No index: read by the row's trigger only.
-- A nullable column without a default is added without rewriting the table.

alter table durable_runs add column followups jsonb;
