-- Scaling out (docs/sql.md, "Scaling out"): concurrency keys, singletons, schedules, and a
-- notification when a run becomes due.
--
-- Concurrency keys. A workflow with `concurrency: { key, limit }` stores its run's key at start.
-- A claim takes such a run only while fewer than `limit` runs of its workflow and key are
-- executing (running under a live lease). Claimers of one key serialise on an advisory lock
-- taken inside the claim and count again under it, so racing claimers never exceed the limit:
-- the claim itself is redefined once, with the version filter, in 0005.
--
-- Singletons. A workflow with `singleton: { key }` stores its run's key at start; a unique index
-- over the non-terminal runs of one workflow and key refuses a second one.

alter table durable_runs add column concurrency_key text check (length(concurrency_key) between 1 and 255),
                         add column singleton_key text check (length(singleton_key) between 1 and 255);

-- The runs executing under a key: what a claim counts against the limit.
create index durable_runs_concurrency on durable_runs (workflow, concurrency_key)
  where status = 'running' and concurrency_key is not null;

-- One non-terminal run per workflow and singleton key.
create unique index durable_runs_singleton on durable_runs (workflow, singleton_key)
  where singleton_key is not null and status in ('pending', 'running', 'waiting');

-- Schedules: one row per scheduled workflow. `next_slot` is the next slot a tick starts; the
-- first is the first slot after the schedule was first seen. A tick starts the run of a due slot
-- (id `<workflow>@<slot>`, so racing ticks start it once), then moves `next_slot` on, conditional
-- on it being unchanged. Slots are computed by the engine on the database clock.
create table durable_schedules (
  workflow text primary key check (length(workflow) between 1 and 255),
  cron text not null,
  timezone text not null,
  next_slot timestamptz not null,
  last_slot timestamptz,
  last_run_id text,
  created_at timestamptz not null default durable_now(),
  updated_at timestamptz not null default durable_now()
);

-- How many runs of each workflow and concurrency key are executing now, other than p_run_id.
create function durable_concurrency_used(p_workflow text, p_key text, p_run_id text, p_now timestamptz)
returns bigint
language sql stable as $$
  select count(*) from durable_runs
   where workflow = p_workflow and concurrency_key = p_key and status = 'running'
     and lease_until > p_now and id <> p_run_id
$$;

-- A run became due now (started, released, signalled, retried): tell the workers that LISTEN
-- (worker mode). One notification per transaction: Postgres folds identical ones.
create function durable_notify_due() returns trigger
language plpgsql as $$
begin
  perform pg_notify('durable_due', '');
  return null;
end
$$;

create trigger durable_runs_due_notify
  after insert or update of wake_at on durable_runs
  for each row when (new.status in ('pending', 'waiting') and new.wake_at <= durable_now())
  execute function durable_notify_due();
