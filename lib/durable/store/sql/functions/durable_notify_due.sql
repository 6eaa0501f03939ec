-- durable_notify_due(): the trigger function of durable_runs_due_notify (migration 0004), which
-- fires after an insert or an update of wake_at that leaves a run pending or waiting and due now
-- (started, released, signalled, retried). It tells the workers that LISTEN on durable_due (worker
-- mode). One notification per transaction: Postgres folds identical ones and sends them at commit.

create or replace function durable_notify_due() returns trigger
language plpgsql as $$
begin
  perform pg_notify('durable_due', '');
  return null;
end
$$;
