-- Composition: child runs, waits that race, deadlines and callback URLs (docs/sql.md,
-- "Migration 0008"). Tables, columns and indexes only; the functions are in
-- lib/durable/store/sql/functions/.

-- A run started by another run's `invoke` or `start` names its parent; its deadline is the earlier
-- of its own and its parent's. `expire_at` (start option `ttl`): a run not claimed for the first
-- time by then fails with code `expired`.
alter table durable_runs add column parent_id text check (length(parent_id) between 1 and 255),
                         add column deadline_at timestamptz,
                         add column expire_at timestamptz;
create index durable_runs_parent on durable_runs (parent_id, created_at desc, id desc)
  where parent_id is not null;

-- A wait that races (`waitForAny`, and the single-branch waits `invoke` and `waitForCallback`
-- are written the same way): its branches, and the runs it waits on. The partial GIN index finds
-- the waiters of a run as it ends.
alter table durable_steps add column branches jsonb,
                          add column target_runs text[];
create index durable_steps_waiting_on_runs on durable_steps using gin (target_runs)
  where status = 'waiting';
alter table durable_steps drop constraint durable_steps_kind_check;
alter table durable_steps add constraint durable_steps_kind_check
  check (kind in ('run', 'tx', 'value', 'sleep', 'signal', 'poll', 'ai', 'invoke', 'start', 'any', 'callback'));

-- A callback URL's capability: the token carries this id and a MAC over it; the row binds it to
-- the run and the step, holds the payload's JSON Schema, and the first delivery.
create table durable_callbacks (
  id text primary key check (length(id) between 1 and 255),
  run_id text not null references durable_runs (id) on delete cascade,
  step_id text not null check (length(step_id) between 1 and 255),
  schema jsonb,
  deadline_at timestamptz,
  payload jsonb,
  payload_bytes integer,
  delivery_key text check (length(delivery_key) between 1 and 255),
  delivered_at timestamptz,
  created_at timestamptz not null default durable_now()
);
create index durable_callbacks_run on durable_callbacks (run_id);
