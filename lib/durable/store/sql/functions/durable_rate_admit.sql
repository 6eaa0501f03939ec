-- durable_rate_admit(run, limit, period_ms, now, wait): decides a first claim of a rate-limited run
-- (docs/sql.md, "Flow control"; docs/guide/flow-control.md). Answers null when the run may start
-- now; 'infinity' when the key's lock is held and `wait` is false (undecided: the claim skips the
-- run for this call); else the time the run was held until, which it wrote as the run's wake_at.
--
-- A key's starts are serialised by its advisory lock (seed 1, so that it never shares a lock with
-- a concurrency key's, which uses seed 0). The window is counted by a later statement than the
-- lock, so its snapshot (READ COMMITTED) sees every first claim of the key committed before the
-- lock was granted: of any limit + 1 first claims within one period, the last to take the lock
-- counts the others, and is held. It reads at most `limit` entries of durable_runs_rate_claims,
-- the key's first claims newer than now - period, newest first.
--
-- A held run leaves the due range, so no claim reads it again before its time (a claim that met
-- every held run at every tick would cost O(backlog)). Held the first time, it is placed in the
-- key's queue: the slot after the key's newest `limit` entries among its first claims and its
-- held runs (durable_runs_rate_queue, newest first), so a backlog is spread at the rate, one
-- update per run, in the order the claims met it. Held again at its slot (the claimers fell
-- behind, or the limit was lowered), it waits only until the window frees, keeping its place.

create or replace function durable_rate_admit(
  p_run durable_runs, p_limit integer, p_period_ms bigint, p_now timestamptz, p_wait boolean
) returns timestamptz
language plpgsql as $$
declare
  v_lock bigint := hashtextextended(p_run.workflow || '/' || p_run.rate_key, 1);
  v_period interval := p_period_ms * interval '1 millisecond';
  v_claims timestamptz[];
  v_slot timestamptz;
begin
  if p_wait then
    perform pg_advisory_xact_lock(v_lock);
  elsif not pg_try_advisory_xact_lock(v_lock) then
    return 'infinity';
  end if;
  v_claims := array(
    select first_claimed_at from durable_runs
     where workflow = p_run.workflow and rate_key = p_run.rate_key and first_claimed_at > p_now - v_period
     order by first_claimed_at desc
     limit p_limit);
  if cardinality(v_claims) < p_limit then
    return null;
  end if;
  -- The window frees a start when the oldest of its newest `limit` first claims leaves it.
  v_slot := v_claims[p_limit] + v_period;
  if p_run.rate_slot_at is null then
    v_slot := greatest(v_slot, (
      select t + v_period from (
        select unnest(v_claims) as t
        union all
        (select wake_at from durable_runs
          where workflow = p_run.workflow and rate_key = p_run.rate_key and rate_slot_at is not null
            and attempts = 0 and wake_at > p_now and id <> p_run.id
          order by wake_at desc
          limit p_limit)) queued
      order by t desc
      offset p_limit - 1
      limit 1));
  end if;
  -- A deadline or a ttl before the slot still ends the run on time (the claim picks it then).
  update durable_runs set wake_at = least(v_slot, deadline_at, expire_at), rate_slot_at = v_slot, updated_at = p_now
   where id = p_run.id;
  return v_slot;
end
$$;
