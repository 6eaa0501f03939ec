-- Flow control: rate limits, debounce and priority (docs/sql.md, "Flow control", "Migration 0010";
-- docs/guide/flow-control.md). Columns and indexes only; the claim and the start that use them are
-- in store/sql/functions/ and store/insert-run.ts.

-- Priority: due runs are claimed by priority (higher first), then due time. Set at start (an
-- option of `start` or the workflow's `priority(input)`); 0 for every run before this migration.
alter table durable_runs add column priority integer not null default 0;

-- The claim's ordered index from now on: `priority = p and wake_at <= now order by wake_at` is one
-- range of it, and `max(priority)` its first entry. Its predicate, `wake_at is not null`, holds for
-- exactly the unfinished runs (the check durable_runs_check ties wake_at to the status), as
-- durable_runs_due's does, but only a statement without a status test implies it and no other
-- index: the claim's pick, written so, can be planned on this index alone (a generic plan was seen
-- to scan durable_runs_due by wake_at and filter the priority). durable_runs_due (0001) stays: the
-- next wake (`min(wake_at)`), the due count and the claims of the previous release read it.
create index durable_runs_due_priority on durable_runs (priority desc, wake_at)
  where wake_at is not null;

-- When the run was first claimed (its start, as a rate limit counts starts); null until then.
alter table durable_runs add column first_claimed_at timestamptz;

-- Rate limits. `rate_key` is the run's key (the workflow's `rateLimit.key(input)`, or '' for "the
-- whole workflow"), computed at start; null: the workflow had no rate limit then. A key's window
-- is counted by first-claim time: `first_claimed_at > now - period` is a range of this index of at
-- most `limit` entries while the limit holds, so the claim counts it in O(limit) however many runs
-- of the key finished before.
alter table durable_runs add column rate_key text check (length(rate_key) <= 255);
create index durable_runs_rate_claims on durable_runs (workflow, rate_key, first_claimed_at)
  where rate_key is not null and first_claimed_at is not null;

-- A key's queue: its held runs by wake_at (a run held by the claim has `rate_slot_at`, the slot it
-- was given, and is not claimed yet). A claim that finds the key full moves the run out of the due
-- range, to the slot after the key's newest `limit` first claims and held runs, the newest entries
-- of this index; a run held again at its slot (claimers fell behind) waits only until the window
-- frees, keeping its place. No status in the predicate: a finished run has no wake_at, so
-- `wake_at > now` leaves it out, and a statement without a status test implies no other index.
alter table durable_runs add column rate_slot_at timestamptz;
create index durable_runs_rate_queue on durable_runs (workflow, rate_key, wake_at)
  where rate_slot_at is not null and attempts = 0;

-- Debounce: the run's key (`debounce.key(input)`), computed at start. At most one run per workflow
-- and key is not yet claimed: a start of the key finds it here and replaces its input, and two
-- racing starts conflict on this index (one inserts, the other then updates).
alter table durable_runs add column debounce_key text check (length(debounce_key) between 1 and 255);
create unique index durable_runs_debounce on durable_runs (workflow, debounce_key)
  where debounce_key is not null and status = 'pending' and attempts = 0;
