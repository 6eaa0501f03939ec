-- durable_claim_run: claim one due run in one round trip (docs/sql.md, "durable_claim_run").
--
-- Picks one due run of the instance's workflows (or exactly p_run_id) with SKIP LOCKED: a row
-- another transaction holds (another claimer's pick, an owner's receipt inside an open tx step,
-- a delivery, a cancel) is skipped, never waited for. Then bumps the fence, takes the lease from
-- the database clock (lease_until and wake_at both now + p_lease_ms), answers the due waits of a
-- waiting run (durable_resolve_waits) and returns the run with its ledger and mailbox.
--
-- A running run whose lease ran out lost its claim: lost_claims + 1, lost_lease_until, and a
-- `heal` event. plpgsql on purpose: the ledger is read by a later statement than the one that
-- locked the row, so its fresh snapshot (READ COMMITTED) sees every receipt committed before the
-- lock; a single statement would read it from the snapshot taken before the lock wait.
--
-- Filters. p_exclude: runs this tick released. p_versions ({ workflow: [versions] }, '' for "no
-- version"; null accepts any): only runs of a registered (workflow, version). p_limits
-- ({ workflow: limit }): a run whose workflow has a concurrency limit and whose key has that many
-- runs executing stays due, and the next candidate is tried. A candidate's key is counted once in
-- the pick (cheap, racy) and again under the key's advisory lock (exact: a later statement sees
-- every claim of the key committed before the lock). Only the first keyed candidate waits for its
-- key's lock (the holder keeps it for one short claim); later ones only try it, so a claimer never
-- waits while it holds a key's lock and two claimers cannot deadlock. At most 20 candidates are
-- skipped so. p_rates ({ workflow: { limit, periodMs } }): a first claim of a run with a rate key
-- is decided by durable_rate_admit under the key's lock; a refused run is held with the key's
-- other due runs in one statement (moved out of the due range to their slots, so no later claim
-- reads them before then: a claim skips a full key's backlog by its index, not one candidate at a
-- time), and the next candidate is tried. At most 20 such holds.
--
-- p_more (0012): a claim that stops at one of its bounds (20 skipped candidates, 20 holds, 100
-- overdue ends) with runs it has not reached answers { more: true } instead of null, so that a
-- tick claims again rather than take "nothing claimable is due" from it. The older forms pass
-- false and answer null there, as they always did.
--
-- Priority (0010, 0012). Due runs are taken by priority, higher first, then by wake_at. With
-- nothing due (one probe of durable_runs_due) the claim answers null at once. Else it reads one
-- priority at a time, each a range of durable_runs_due_priority (priority, wake_at <= now), and
-- finds the first priority, and each next lower one, by a probe of that index that lands only on a
-- due run of the instance's workflows: a priority whose runs all sleep, wait or are held is never
-- visited (0010 probed every priority present among unfinished runs, waiting ones too: 1.4 s for
-- an idle claim over 20,000 waiting runs at distinct priorities). At most 100 priorities.
--
-- Deadlines. A run past its deadline (or never claimed by its ttl) is picked whatever its
-- version or key and ended by durable_end_overdue instead of claimed, and the pick goes on (at
-- most 100 such ends per claim). A claimed run's wake_at is capped by its deadline, so a run whose
-- owner is still at work is picked at its deadline and ended then.
--
-- The ledger is read only for a run claimed before (attempts > 1 once this claim counted itself):
-- only an owner writes step rows. An `exists` probe here ran in the plan plpgsql cached at a
-- session's first claim, made while durable_steps was empty, and read the whole table on every
-- claim until an analyze; durable_ledger, a SQL function, is planned at each call.
--
-- The ledger is also read on a fork's first claim (forked_from): a fork starts with the source's
-- receipts and attempts 0, so that its first claim is a first start to a rate limit (0012).
--
-- p_wait (function set 23): false for a batch's claims after its first (durable_claim_runs), which
-- hold the runs they claimed: such a claim only tries a key's lock, so a claimer never waits for a
-- lock while it holds one (a row's or a key's).
--
-- Answers { run, healed, now, steps, mailbox }, null when nothing is due, or { more: true }.
--
-- p_now (function set 25): the time a caller already read in this transaction (durable_finish_and_claim
-- passes its end's), so the claim does not read the clock again; null reads durable_now().

create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb, p_more boolean, p_wait boolean, p_now timestamptz
) returns jsonb
language plpgsql as $$
declare
  v_workflows text[] := array(select jsonb_array_elements_text(p_workflows));
  v_exclude text[] := array(select jsonb_array_elements_text(coalesce(p_exclude, '[]')));
  v_limits jsonb := coalesce(p_limits, '{}');
  v_rates jsonb := coalesce(p_rates, '{}');
  v_now timestamptz := coalesce(p_now, durable_now());
  v_more jsonb := case when p_more then '{"more": true}'::jsonb end;
  v_run durable_runs;
  v_lost boolean;
  v_limit integer;
  v_prio integer;
  v_held timestamptz;
  -- Not p_wait: a batch's later claim (durable_claim_runs) only tries a key's lock, never waits.
  v_waited boolean := not coalesce(p_wait, true);
  v_tries integer := 0;
  v_holds integer := 0;
  v_ended integer := 0;
  v_walked integer := 1;
begin
  if p_run_id is null then
    -- Nothing due at all: one probe of durable_runs_due, whatever the unfinished runs' priorities.
    -- min(), not `exists (... wake_at <= v_now)`: plpgsql's generic plan of that, its bound unknown,
    -- was a sequential scan of the table; min() is always the first entry of the index.
    if not coalesce((select min(wake_at) from durable_runs
                      where status in ('pending', 'running', 'waiting')) <= v_now, false) then
      return null;
    end if;
    -- The highest priority with a due run of these workflows (no status test: see the pick).
    v_prio := durable_due_priority(v_workflows, v_now, null);
  end if;
  loop
    if p_run_id is null then
      if v_prio is null then
        return null;
      end if;
      -- No status test: `wake_at <= v_now` means unfinished (the check constraint), and a status
      -- test would let the planner take durable_runs_due and filter the priority.
      select * into v_run from durable_runs r
       where priority = v_prio and wake_at <= v_now
         and workflow = any (v_workflows) and not (id = any (v_exclude))
         and (durable_version_registered(p_versions, r.workflow, r.version)
              or r.deadline_at <= v_now or (r.expire_at <= v_now and r.attempts = 0))
         and (r.concurrency_key is null or not (v_limits ? r.workflow)
              or r.deadline_at <= v_now or (r.expire_at <= v_now and r.attempts = 0)
              or durable_concurrency_used(r.workflow, r.concurrency_key, r.id, v_now)
                 < (v_limits ->> r.workflow)::integer)
       order by wake_at
       limit 1
       for update skip locked;
      if not found then
        -- Nothing this claim can take at this priority: the next lower one with a due run.
        v_walked := v_walked + 1;
        if v_walked > 100 then
          return null;
        end if;
        v_prio := durable_due_priority(v_workflows, v_now, v_prio);
        continue;
      end if;
    else
      select * into v_run from durable_runs r
       where id = p_run_id and status in ('pending', 'running', 'waiting') and wake_at <= v_now
         and workflow = any (v_workflows)
         and (durable_version_registered(p_versions, r.workflow, r.version)
              or r.deadline_at <= v_now or (r.expire_at <= v_now and r.attempts = 0))
       for update skip locked;
      if not found then
        return null;
      end if;
    end if;
    -- Past its deadline, or never claimed by its ttl: end it and pick again (the test on the row
    -- first, so a claim of a run with neither costs no statement more; coalesced, since a run
    -- without a deadline makes the test null, and `null and f()` calls f).
    if coalesce(v_run.deadline_at <= v_now or (v_run.expire_at <= v_now and v_run.attempts = 0), false)
       and durable_end_overdue(v_run.id, v_now) then
      if p_run_id is not null then
        return null;
      end if;
      v_ended := v_ended + 1;
      if v_ended >= 100 then
        return v_more;
      end if;
      continue;
    end if;
    -- A full concurrency key: skip the run for this call. A rate-limited first claim refused:
    -- the run was held with its key's due backlog (their wake_at moved to their slots), or its
    -- key's lock was busy (skipped). Only the first lock a call needs is waited for; later ones
    -- are only tried, so a claimer never waits while it holds a key's lock and two claimers
    -- cannot deadlock.
    v_limit := (v_limits ->> v_run.workflow)::integer;
    v_held := null;
    if v_run.concurrency_key is not null and v_limit is not null then
      if not v_waited then
        perform pg_advisory_xact_lock(hashtextextended(v_run.workflow || '/' || v_run.concurrency_key, 0));
      end if;
      if not ((not v_waited
               or pg_try_advisory_xact_lock(hashtextextended(v_run.workflow || '/' || v_run.concurrency_key, 0)))
              and durable_concurrency_used(v_run.workflow, v_run.concurrency_key, v_run.id, v_now) < v_limit) then
        v_held := 'infinity';
      end if;
      v_waited := true;
    end if;
    if v_held is null and v_run.rate_key is not null and v_run.attempts = 0 and v_rates ? v_run.workflow then
      v_held := durable_rate_admit(v_run, (v_rates -> v_run.workflow ->> 'limit')::integer,
                                   (v_rates -> v_run.workflow ->> 'periodMs')::bigint, v_now, not v_waited);
      v_waited := true;
    end if;
    exit when v_held is null;
    if p_run_id is not null then
      return null;
    end if;
    if v_held = 'infinity' then
      -- Skipped, not moved: kept out of this call's picks.
      v_exclude := v_exclude || v_run.id;
      v_tries := v_tries + 1;
    else
      v_holds := v_holds + 1;
    end if;
    if v_tries >= 20 or v_holds >= 20 then
      return v_more;
    end if;
  end loop;

  -- A running run whose lease ran out lost its claim: its owner may have started steps.
  v_lost := v_run.status = 'running';
  update durable_runs set
    status = 'running',
    fence = fence + 1,
    attempts = attempts + 1,
    lease_until = v_now + p_lease_ms * interval '1 millisecond',
    wake_at = least(v_now + p_lease_ms * interval '1 millisecond', deadline_at),
    first_claimed_at = coalesce(first_claimed_at, v_now),
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
    'steps', case when v_run.attempts > 1 or v_run.forked_from is not null then durable_ledger(v_run.id)
                  else '[]'::jsonb end,
    'mailbox', case when exists (select 1 from durable_signals where run_id = v_run.id and taken_by is null)
                    then durable_mailbox(v_run.id) else '[]'::jsonb end);
end
$$;

-- The nine-argument form (function sets 23 and 24): the claim reads the clock itself.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb, p_more boolean, p_wait boolean
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, p_limits, p_versions, p_rates, p_more,
                           p_wait, null::timestamptz)
$$;

-- The eight-argument form (0012 and the function sets up to 22): a claim that may wait for its
-- first key's lock, as every single claim may.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb, p_more boolean
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, p_limits, p_versions, p_rates, p_more, true)
$$;

-- The seven-argument form (0010, 0011): answers null where the current claim answers { more: true },
-- as those releases read it, for their instances during a deploy.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, p_limits, p_versions, p_rates, false)
$$;

-- The six-argument form (migrations 0005 to 0009): versions and concurrency limits, no rate limits,
-- for instances of those releases during a deploy. It runs the current body, so it claims
-- by priority too, and starts rate-limited runs without counting them (it knows no limits).
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, p_limits, p_versions, null::jsonb)
$$;

-- The five-argument form (migration 0004 as it shipped: concurrency limits, no versions), for
-- instances of that release during a deploy. It claims any version, as it always did, and now
-- runs the six-argument body (so it reads the ledger as the current claim does).
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, p_limits, null::jsonb)
$$;

-- The four-argument form (migrations 0001 and 0002), for instances of those releases during a
-- deploy and for the bench's raw loop: any version, no limits.
create or replace function durable_claim_run(
  p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb
) returns jsonb
language sql as $$
  select durable_claim_run(p_workflows, p_run_id, p_lease_ms, p_exclude, '{}'::jsonb, null::jsonb)
$$;
