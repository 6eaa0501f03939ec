-- Operations: tags, metadata and forks of runs (docs/sql.md, "Migration 0011";
-- docs/guide/runs.md, "Tags and metadata", "Forking a run"). Columns and indexes only; the
-- functions are in lib/durable/store/sql/functions/.

-- `start(..., { tags })`: up to 10 tags of 1–64 characters, written once at start. `metadata`:
-- what `ctx.setMetadata` merged in, written with the owner's receipts under the fence (4 KiB of
-- JSON text in all, checked by the engine before anything is written). A fork names the run and
-- the step it was forked from.
alter table durable_runs add column tags text[] not null default '{}'
                           check (cardinality(tags) <= 10),
                         add column metadata jsonb not null default '{}'
                           check (jsonb_typeof(metadata) = 'object'),
                         add column forked_from text check (length(forked_from) between 1 and 255),
                         add column forked_from_step text check (length(forked_from_step) between 1 and 255);

-- `list({ tag })` and `list({ metadata })` (containment). Partial: a run without tags or metadata
-- has no entry, so the runs that use neither pay nothing for them on a state change; the list
-- statement repeats the predicate so the planner can take them (store/list-runs.ts).
create index durable_runs_tags on durable_runs using gin (tags) where tags <> '{}';
create index durable_runs_metadata on durable_runs using gin (metadata jsonb_path_ops)
  where metadata <> '{}';
