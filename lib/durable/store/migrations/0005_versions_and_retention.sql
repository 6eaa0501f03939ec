-- Workflow versions and retention (docs/sql.md, "Migration 0005").
--
-- Versions. A run stores the version of its workflow at start (`version`, null for a workflow
-- that declares none, and for every run started before this migration). A claim takes a run only
-- when the instance registered its (workflow, version): `p_versions` maps each registered name to
-- the versions it registered, '' standing for "no version". Runs of a version no instance has stay
-- due for a deployment that has it, or are failed by durable_fail_unknown_versions.
--
-- Retention. A terminal run's step rows, signals and stream chunks are deleted once it finished
-- longer ago than `retention.steps` (`compacted_at` records that it was), its row once longer ago
-- than `retention.runs`, events once older than `retention.events`. Each statement takes a bounded
-- slice, oldest first, through an index that holds only what it may delete.

alter table durable_runs add column version text check (length(version) between 1 and 255),
                         add column compacted_at timestamptz;

-- Terminal runs whose steps are still there, oldest first: what compaction deletes next.
create index durable_runs_to_compact on durable_runs (finished_at)
  where status in ('completed', 'failed', 'cancelled') and compacted_at is null;
-- Terminal runs by when they finished: what run retention deletes next.
create index durable_runs_finished on durable_runs (finished_at)
  where status in ('completed', 'failed', 'cancelled');
create index durable_events_created on durable_events (created_at);
-- A run's signals, whatever their state: the cascade of a deleted run reads them through it
-- (the mailbox index of 0002 holds only deliveries not yet taken).
create index durable_signals_run on durable_signals (run_id);

-- As in 0001, plus: a run whose steps retention deleted cannot be retried (it would start over
-- from its first step with no receipts, repeating effects): 'compacted', nothing changed.
create or replace function durable_retry_run(p_run_id text) returns text
language plpgsql as $$
declare
  v_run durable_runs;
  v_now timestamptz := durable_now();
begin
  select * into v_run from durable_runs where id = p_run_id for update;
  if not found then
    return 'not_found';
  end if;
  if v_run.status <> 'failed' then
    return 'not_failed';
  end if;
  if v_run.compacted_at is not null then
    return 'compacted';
  end if;
  -- A wait that timed out starts over with a new deadline; any other failed step runs again.
  delete from durable_steps where run_id = p_run_id and status = 'failed' and kind = 'poll';
  update durable_steps set status = 'waiting', wake_at = v_now, completed_at = null, updated_at = v_now
   where run_id = p_run_id and status = 'failed';
  update durable_runs set
    status = 'pending', fence = fence + 1, wake_at = v_now, error = null, output = null,
    waiting_for = null, updated_at = v_now, finished_at = null
  where id = p_run_id;
  insert into durable_events (run_id, kind) values (p_run_id, 'retry');
  return 'retried';
end
$$;

-- Whether the instance that passes `p_versions` registered this run's (workflow, version).
create function durable_version_registered(p_versions jsonb, p_workflow text, p_version text) returns boolean
language sql immutable as $$
  select p_versions is null or coalesce((p_versions -> p_workflow) ? coalesce(p_version, ''), false)
$$;

-- As in 0002, plus two filters.
-- `p_limits` ({ workflow: limit }, 0004's concurrency keys): a run whose workflow has a limit and
-- whose key has that many runs executing stays due; the next candidate is tried. A candidate's
-- key is counted once in the pick (cheap, racy) and again under the key's advisory lock (exact).
-- The first keyed candidate waits for its key's lock (another claim of the key holds it for one
-- short transaction); later ones only try it, so a claimer never waits while it holds a key's
-- lock and two claimers cannot deadlock.
-- `p_versions`: only runs of a registered (workflow, version).
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb
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
         and durable_version_registered(p_versions, r.workflow, r.version)
         and (r.concurrency_key is null or not (v_limits ? r.workflow)
              or durable_concurrency_used(r.workflow, r.concurrency_key, r.id, v_now)
                 < (v_limits ->> r.workflow)::integer)
       order by wake_at
       limit 1
       for update skip locked;
    else
      select * into v_run from durable_runs r
       where id = p_run_id and status in ('pending', 'running', 'waiting') and wake_at <= v_now
         and workflow = any (v_workflows)
         and durable_version_registered(p_versions, r.workflow, r.version)
       for update skip locked;
    end if;
    if not found then
      return null;
    end if;
    v_limit := (v_limits ->> v_run.workflow)::integer;
    exit when v_run.concurrency_key is null or v_limit is null;
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

-- The four-argument claim of 0002, for instances of the previous release during a deploy: any
-- version, no limits.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, '{}'::jsonb, null::jsonb)
$$;

-- How many runs a claim would take now, counting up to p_cap, only runs of a registered
-- (workflow, version): what a tick asks before it fans out.
create function durable_count_due(p_workflows jsonb, p_cap integer, p_versions jsonb) returns integer
language sql stable as $$
  select count(*)::integer from (
    select 1 from durable_runs r
     where status in ('pending', 'running', 'waiting') and wake_at <= durable_now()
       and workflow in (select jsonb_array_elements_text(p_workflows))
       and durable_version_registered(p_versions, r.workflow, r.version)
     limit p_cap) due
$$;

-- Fails, under a new fence, up to p_limit due runs of the registered names whose version the
-- instance does not have (createDurable({ unknownVersion: "fail" })). A running run under a live
-- lease is left alone (its owner has the version). Answers the ids failed.
create function durable_fail_unknown_versions(p_versions jsonb, p_limit integer) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_ids jsonb;
begin
  with due as (
    select id from durable_runs r
     where status in ('pending', 'running', 'waiting') and wake_at <= v_now
       and p_versions ? workflow and not durable_version_registered(p_versions, r.workflow, r.version)
     order by wake_at
     limit p_limit
     for update skip locked
  ), failed as (
    update durable_runs r set
      status = 'failed', fence = fence + 1, wake_at = null, waiting_for = null, lease_until = null,
      error = jsonb_build_object(
        'code', 'unknown_version', 'name', 'UnknownVersionError',
        'message', format('workflow "%s" has no version %s in this deployment (it registers %s)',
                          r.workflow, coalesce(quote_literal(r.version), 'without a version'),
                          p_versions -> r.workflow)),
      updated_at = v_now, finished_at = v_now
      from due where r.id = due.id
    returning r.id, r.fence, r.version
  ), noted as (
    insert into durable_events (run_id, kind, fence, data)
    select id, 'version.unknown', fence, jsonb_build_object('version', version) from failed
  )
  select coalesce(jsonb_agg(id), '[]'::jsonb) into v_ids from failed;
  return v_ids;
end
$$;
