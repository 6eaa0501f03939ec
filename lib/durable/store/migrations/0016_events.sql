-- Events (docs/sql.md, "Migration 0016 and durable_publish"; docs/guide/events.md). A table, a
-- column, two indexes and the step kind's domain; no function.
--
-- durable_app_events holds what `durable.publish` inserted (durable_events is the run timeline):
-- the event id is the caller's dedup key (a repeated publish with it starts nothing), `data` is
-- the payload (sealed when encryption is on), `source` names the inbound route that published it
-- (null: the app). Read by name since a time (a wait replayed after an event it had not seen), so
-- the index is (name, created_at); old events are deleted by age (docs/guide/events.md, "Keeping
-- events"), so (created_at) too.
create table durable_app_events (
  id durable_name primary key,
  name durable_name not null,
  data jsonb not null,
  source durable_name,
  created_at timestamptz not null default durable_now()
);
create index durable_app_events_by_name on durable_app_events (name, created_at);
create index durable_app_events_by_age on durable_app_events (created_at);

-- ctx.step.waitForEvent: a waiting step of kind 'event' keeps the event name in signal_name and
-- { match?, since } here. The partial index holds only waiting event steps, so a publish finds
-- the waits on its name without reading the rest of the ledger, and the rows a claim or a receipt
-- rewrites are not in it.
alter table durable_steps add column event_wait jsonb;
create index durable_steps_event_waits on durable_steps (signal_name)
  where kind = 'event' and status = 'waiting';

-- The step kind's domain takes 'event', NOT VALID as in 0014: every stored kind met the narrower check.
alter domain durable_step_kind drop constraint durable_step_kind_check;
alter domain durable_step_kind add constraint durable_step_kind_check
  check (value in ('run', 'tx', 'value', 'sleep', 'signal', 'poll', 'ai', 'invoke', 'start', 'any', 'callback', 'patch',
                   'event'))
  not valid;
