-- The claim's walk and rate holds (docs/sql.md, "Migration 0012", "Flow control";
-- docs/guide/flow-control.md). Columns and indexes only; the functions that use them are in
-- store/sql/functions/.

-- The rate limit a held run was given its slot under, as '<limit>/<periodMs>'; null until a claim
-- holds the run. A deploy that raises or removes the limit finds the runs held under another
-- (durable_release_rate_holds) and makes them due again. No check: the claim alone writes it,
-- from the integers the engine checked, and a check would run at every update of the row.
alter table durable_runs add column rate_hold text;

-- A key's runs not yet claimed, in the claim's order (priority, then due time): a claim that finds
-- the key full holds its due runs in one statement from a range of this index, instead of meeting
-- them one candidate at a time (durable_rate_admit).
create index durable_runs_rate_backlog on durable_runs (workflow, rate_key, priority desc, wake_at)
  where rate_key is not null and attempts = 0 and wake_at is not null;

-- The held runs by the limit they were held under: the runs of a workflow held under a limit other
-- than the registered one are one or two ranges of it, so the sweep costs an index probe per
-- workflow when there are none.
create index durable_runs_rate_holds on durable_runs (workflow, rate_hold)
  where rate_slot_at is not null and attempts = 0 and wake_at is not null;
