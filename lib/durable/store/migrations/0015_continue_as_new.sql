-- ctx.continueAsNew (docs/sql.md, "Migration 0015 and function set 26"; docs/guide/continue-as-new.md).
-- Two nullable columns, each written once: `continued_as` on the run that ended by continuing (by
-- the statement that ends it and inserts its successor, durable_continue_run), `continued_from` on
-- the successor (by its insert). No index: both are read by a run's primary key (the run page's
-- links), and no claim, receipt or end reads or sets them, so the hot row's indexes and checks
-- are as they were (a nullable column without a default is added without rewriting the table).
-- Typed durable_name, as every run id is (0013): the domain's check runs only where a value is
-- assigned, never at the updates of a claim.

alter table durable_runs
  add column continued_as durable_name,
  add column continued_from durable_name;
