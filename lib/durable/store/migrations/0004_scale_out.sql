-- Scaling out (docs/sql.md, "Scaling out"): concurrency keys, singletons, schedules, and a
-- notification when a run becomes due.
--
-- Concurrency keys. A workflow with `concurrency: { key, limit }` stores its run's key at start.
-- A claim takes such a run only while fewer than `limit` runs of its workflow and key are
-- executing (running under a live lease). Claimers of one key serialise on an advisory lock
-- taken inside the claim and count again under it, so racing claimers never exceed the limit.
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

-- As in 0002, plus `p_limits` ({ workflow: limit }): a run whose workflow has a limit and whose
-- key has that many runs executing stays due; the next candidate is tried. A candidate's key is
-- counted once in the pick (cheap, racy) and again under the key's advisory lock (exact). The
-- first keyed candidate waits for its key's lock (another claim of the key holds it for one short
-- transaction); later ones only try it, so a claimer never waits while it holds a key's lock and
-- two claimers cannot deadlock.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb
) returns jsonb
language plpgsql as $$
declare
  v_workflows text[] := array(select jsonb_array_elements_text(p_workflows));
  v_exclude text[] := array(select jsonb_array_elements_text(coalesce(p_exclude, '[]')));
  v_limits jsonb := coalesce(p_limits, '{}');
  v_now timestamptz := durable_now();
  v_run durable_runs;
  v_lost boolean;
  v_limit integer;
  v_tries integer := 0;
begin
  loop
    if p_run_id is null then
      select * into v_run from durable_runs r
       where status in ('pending', 'running', 'waiting') and wake_at <= v_now
         and workflow = any (v_workflows) and not (id = any (v_exclude))
         and (r.concurrency_key is null or not (v_limits ? r.workflow)
              or durable_concurrency_used(r.workflow, r.concurrency_key, r.id, v_now)
                 < (v_limits ->> r.workflow)::integer)
       order by wake_at
       limit 1
       for update skip locked;
    else
      select * into v_run from durable_runs
       where id = p_run_id and status in ('pending', 'running', 'waiting') and wake_at <= v_now
         and workflow = any (v_workflows)
       for update skip locked;
    end if;
    if not found then
      return null;
    end if;
    v_limit := (v_limits ->> v_run.workflow)::integer;
    exit when v_run.concurrency_key is null or v_limit is null;
    -- Under the key's lock, the count is exact: every claim of this key that committed before is seen.
    if v_tries = 0 then
      perform pg_advisory_xact_lock(hashtextextended(v_run.workflow || '/' || v_run.concurrency_key, 0));
    end if;
    exit when (v_tries = 0 or pg_try_advisory_xact_lock(hashtextextended(v_run.workflow || '/' || v_run.concurrency_key, 0)))
          and durable_concurrency_used(v_run.workflow, v_run.concurrency_key, v_run.id, v_now) < v_limit;
    if p_run_id is not null then
      return null;
    end if;
    v_exclude := v_exclude || v_run.id;
    v_tries := v_tries + 1;
    if v_tries >= 20 then
      return null;
    end if;
  end loop;

  -- A running run whose lease ran out lost its claim: its owner may have started steps.
  v_lost := v_run.status = 'running';
  update durable_runs set
    status = 'running',
    fence = fence + 1,
    attempts = attempts + 1,
    lease_until = v_now + p_lease_ms * interval '1 millisecond',
    wake_at = v_now + p_lease_ms * interval '1 millisecond',
    lost_claims = lost_claims + case when v_lost then 1 else 0 end,
    lost_lease_until = case when v_lost then v_run.lease_until else lost_lease_until end,
    updated_at = v_now
  where id = v_run.id
  returning * into v_run;

  if v_lost then
    insert into durable_events (run_id, kind, fence, data)
    values (v_run.id, 'heal', v_run.fence,
            jsonb_build_object('by', 'claim', 'leaseExpiredAt', v_run.lost_lease_until));
  end if;

  if v_run.status = 'running' and v_run.waiting_for is not null then
    perform durable_resolve_waits(v_run.id, v_run.fence, v_now);
    update durable_runs set waiting_for = null where id = v_run.id;
  end if;

  return jsonb_build_object(
    'run', to_jsonb(v_run),
    'healed', v_lost,
    'now', v_now,
    'steps', case when exists (select 1 from durable_steps where run_id = v_run.id)
                  then durable_ledger(v_run.id) else '[]'::jsonb end,
    'mailbox', case when exists (select 1 from durable_signals where run_id = v_run.id and taken_by is null)
                    then durable_mailbox(v_run.id) else '[]'::jsonb end);
end
$$;

-- The four-argument claim of 0002, for instances of the previous release during a deploy.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, '{}'::jsonb)
$$;

-- How many runs a claim would take now, counting up to p_cap: what a tick asks before it fans out.
create function durable_count_due(p_workflows jsonb, p_cap integer) returns integer
language sql stable as $$
  select count(*)::integer from (
    select 1 from durable_runs
     where status in ('pending', 'running', 'waiting') and wake_at <= durable_now()
       and workflow in (select jsonb_array_elements_text(p_workflows))
     limit p_cap) due
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
