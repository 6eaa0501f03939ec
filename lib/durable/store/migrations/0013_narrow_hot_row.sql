-- A narrow hot row (docs/sql.md, "Migration 0013"; docs/performance.md, "The CHECK constraints").
-- Types, columns and a trigger restated only; no function.
--
-- PostgreSQL evaluates every CHECK constraint of a table at every insert and update of a row, whatever
-- column changed: a claim, a receipt's update and an end each read and prepared the 14 of
-- durable_runs. A domain's check runs only where a value of the domain is assigned or cast: at the
-- insert, and at an update only for the columns it sets. So the value checks move to domains, and
-- every write path still refuses an unstorable value; the one check left on durable_runs ties
-- wake_at to the status (two columns; a domain sees one).
--
-- On an existing table: a column's type becomes a domain with no check yet (no rewrite of the
-- table: a domain over the column's own type is a relabelling; a plain btree index on the column is
-- kept, a partial or GIN one is built again), then the domain's check is added, which scans the table once (it fails if a stored
-- value breaks it: none can, the table's check held until now). A domain created with its check
-- already in place would rewrite the whole table and every index instead. Everything here holds
-- the table's ACCESS EXCLUSIVE lock until migrate()'s transaction commits.

create domain durable_name as text;
create domain durable_rate_key as text;
create domain durable_run_status as text;
create domain durable_run_tags as text[];
create domain durable_run_metadata as jsonb;
create domain durable_step_status as text;
create domain durable_step_kind as text;

-- The trigger names status in its condition, and a column a trigger definition uses cannot change
-- type: it is dropped and created again as 0004 made it.
drop trigger durable_runs_due_notify on durable_runs;

alter table durable_runs
  drop constraint durable_runs_id_check,
  drop constraint durable_runs_workflow_check,
  drop constraint durable_runs_status_check,
  drop constraint durable_runs_concurrency_key_check,
  drop constraint durable_runs_singleton_key_check,
  drop constraint durable_runs_version_check,
  drop constraint durable_runs_parent_id_check,
  drop constraint durable_runs_rate_key_check,
  drop constraint durable_runs_debounce_key_check,
  drop constraint durable_runs_tags_check,
  drop constraint durable_runs_metadata_check,
  drop constraint durable_runs_forked_from_check,
  drop constraint durable_runs_forked_from_step_check,
  alter column id type durable_name,
  alter column workflow type durable_name,
  alter column status type durable_run_status,
  alter column concurrency_key type durable_name,
  alter column singleton_key type durable_name,
  alter column version type durable_name,
  alter column parent_id type durable_name,
  alter column rate_key type durable_rate_key,
  alter column debounce_key type durable_name,
  alter column tags type durable_run_tags,
  alter column metadata type durable_run_metadata,
  alter column forked_from type durable_name,
  alter column forked_from_step type durable_name;

alter table durable_steps
  drop constraint durable_steps_step_id_check,
  drop constraint durable_steps_status_check,
  drop constraint durable_steps_kind_check,
  alter column step_id type durable_name,
  alter column status type durable_step_status,
  alter column kind type durable_step_kind;

create trigger durable_runs_due_notify
  after insert or update of wake_at on durable_runs
  for each row when (new.status in ('pending', 'waiting') and new.wake_at <= durable_now())
  execute function durable_notify_due();

-- The checks the table constraints made, now the domains' (each scans the columns of its domain).
alter domain durable_name add constraint durable_name_check check (length(value) between 1 and 255);
alter domain durable_rate_key add constraint durable_rate_key_check check (length(value) <= 255);
alter domain durable_run_status add constraint durable_run_status_check
  check (value in ('pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'));
alter domain durable_run_tags add constraint durable_run_tags_check check (cardinality(value) <= 10);
alter domain durable_run_metadata add constraint durable_run_metadata_check
  check (jsonb_typeof(value) = 'object');
alter domain durable_step_status add constraint durable_step_status_check
  check (value in ('running', 'waiting', 'completed', 'failed'));
alter domain durable_step_kind add constraint durable_step_kind_check
  check (value in ('run', 'tx', 'value', 'sleep', 'signal', 'poll', 'ai', 'invoke', 'start', 'any', 'callback'));
