-- durable_start_followups(): the trigger function of durable_runs_followups, which fires after an
-- update of a run's status when the run has `followups`, and acts when the status changed to one
-- its followups list (completed, failed, cancelled, waiting) (0017; docs/sql.md, "Follow-ups"; docs/guide/lifecycle.md). It inserts, in the
-- transaction that ends the run, the runs its end starts: one run of each workflow its
-- onComplete / onFailure named, and one run of the built-in `durable.webhook` workflow per
-- webhook whose events include the end. So a hook is never lost: the end and its follow-ups
-- commit together or not at all. A trigger, not a call in each function that ends a run: every
-- path does (the owner's end, a batched one, a cancel of one or many and its cascade, a deadline,
-- an unknown version, a suspension), and one that a later function adds does too.
--
-- `followups` is { completed?, failed?, cancelled?, waiting?: [target, ...] }, a target
-- { workflow, version, deadline_in_ms } or { webhook: url }, as the engine prepared it at the
-- run's insert (the deploy that started the run decides its hooks, as it decides its tags). It
-- names no secret: a delivery looks up its url's secret in its instance's configuration.
--
-- Each follow-up is a child of the ended run (parent_id), pending and due now, with
-- followups = {"followup": true}: it has no hooks of its own (no loop of hooks), and a cascading
-- cancel of the run after a retry leaves it (durable_open_descendants, with_followups false). Its
-- id is derived from the end: `<run id>~<status>~<fence>~<n>` (n: the target's position),
-- md5-shortened past 255 characters. Every end of a run is under a fence of its own (a claim, a cancel, a deadline's end
-- and a retry each move it), so a retried run that ends again starts new follow-ups, and an
-- insert of an id already there does nothing. A lifecycle run's input is { id, workflow, status,
-- output } or { id, workflow, status, error } of the ended run; a delivery's is { url, type,
-- timestamp, data } with the same object as `data`. With encryption, output and error are the
-- envelopes sealed under the ended run's id, copied as they are (a reader opens any envelope).
--
-- A run ending by ctx.continueAsNew hands its followups to its successor (durable_continue_run,
-- which names it in the transaction-local setting durable.continuing): it starts none.

create or replace function durable_start_followups() returns trigger
language plpgsql as $$
declare
  v_targets jsonb := new.followups -> new.status;
  v_target jsonb;
  v_n integer := 0;
  v_id text;
  v_now timestamptz;
  v_ended jsonb;
begin
  -- The trigger's WHEN tests only followups (the cheapest test every status update of every run
  -- pays: docs/sql.md, "Follow-ups"); the status change is tested here, for runs with followups.
  if old.status is not distinct from new.status or jsonb_typeof(v_targets) is distinct from 'array' then
    return null;
  end if;
  if current_setting('durable.continuing', true) = new.id then
    return null;
  end if;
  v_now := durable_now();
  v_ended := jsonb_build_object('id', new.id, 'workflow', new.workflow, 'status', new.status)
             || case new.status when 'completed' then jsonb_build_object('output', new.output)
                                when 'waiting' then '{}'::jsonb
                                else jsonb_build_object('error', new.error) end;
  for v_target in select t from jsonb_array_elements(v_targets) t loop
    v_n := v_n + 1;
    v_id := new.id || '~' || new.status || '~' || new.fence || '~' || v_n;
    if length(v_id) > 255 then
      v_id := left(new.id, 200) || '~' || md5(v_id);
    end if;
    if v_target ? 'webhook' then
      insert into durable_runs (id, workflow, input, wake_at, parent_id, followups, created_at, updated_at)
      values (v_id, 'durable.webhook',
              jsonb_build_object('url', v_target ->> 'webhook', 'type', 'run.' || new.status,
                                 'timestamp', v_now, 'data', v_ended),
              v_now, new.id, '{"followup": true}', v_now, v_now)
      on conflict do nothing;
    else
      insert into durable_runs (id, workflow, input, wake_at, version, deadline_at, parent_id, followups,
                                created_at, updated_at)
      values (v_id, v_target ->> 'workflow', v_ended, v_now, v_target ->> 'version',
              v_now + (v_target ->> 'deadline_in_ms')::bigint * interval '1 millisecond',
              new.id, '{"followup": true}', v_now, v_now)
      on conflict do nothing;
    end if;
  end loop;
  return null;
end
$$;

-- The trigger (0017), made here with its function: a numbered migration runs before the set and
-- holds no function. `create or replace` keeps it as this text at every application of the set.
-- Only once the column exists: the set is also applied to a schema before 0017 (the upgrade
-- tests install older migrations with today's set), and applied again after 0017 is.
do $$
begin
  if exists (select 1 from information_schema.columns
              where table_schema = current_schema() and table_name = 'durable_runs' and column_name = 'followups') then
    create or replace trigger durable_runs_followups
      after update of status on durable_runs
      for each row
      when (new.followups is not null)
      execute function durable_start_followups();
  end if;
end
$$;
