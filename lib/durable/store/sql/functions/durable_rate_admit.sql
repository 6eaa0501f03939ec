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
-- A refused run is held with the key's other due runs not yet claimed, in one statement (up to
-- 1,000, from durable_runs_rate_backlog, 0012): the key is full for all of them, and a claim that
-- met them one candidate at a time spent its candidates on one key while other runs waited. Held
-- runs leave the due range, so no claim reads them again before their time. Each gets the next
-- slot of the key's queue: the run the claim met first, then the others by priority and due time.
-- The slots follow the key's newest `limit` entries among its first claims and its queued runs
-- (durable_runs_rate_queue, newest first), e_1 oldest: the j-th run held (from 0) takes
-- e_(j mod limit + 1) + (j div limit + 1) * period, so no period holds more than `limit` slots and
-- a backlog drains at the rate, one update per run. A run held again (its slot came while the key
-- was still full: the claimers fell behind, or the limit was lowered) takes the next slot the same
-- way. rate_hold records the limit, so a deploy that changes it releases them
-- (durable_release_rate_holds).

create or replace function durable_rate_admit(
  p_run durable_runs, p_limit integer, p_period_ms bigint, p_now timestamptz, p_wait boolean
) returns timestamptz
language plpgsql as $$
declare
  v_lock bigint := hashtextextended(p_run.workflow || '/' || p_run.rate_key, 1);
  v_period interval := p_period_ms * interval '1 millisecond';
  v_claims timestamptz[];
  v_entries timestamptz[];
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
  -- The key's newest `limit` entries, oldest first: its first claims in the window and its queue.
  v_entries := array(
    select t from (
      select t from unnest(v_claims) t
      union all
      (select wake_at from durable_runs
        where workflow = p_run.workflow and rate_key = p_run.rate_key and rate_slot_at is not null
          and attempts = 0 and wake_at > p_now
        order by wake_at desc
        limit p_limit)
      order by t desc
      limit p_limit) newest
    order by t);
  -- A deadline or a ttl before the slot still ends the run on time (the claim picks it then).
  with others as (
    select id, priority, wake_at from durable_runs
     where workflow = p_run.workflow and rate_key = p_run.rate_key and attempts = 0
       and wake_at is not null and wake_at <= p_now and id <> p_run.id
     order by priority desc, wake_at
     limit 999
     for update skip locked),
  queue as (
    select id, row_number() over (order by met desc, priority desc, wake_at) - 1 as j
      from (select p_run.id, p_run.priority, p_run.wake_at, true as met
            union all
            select id, priority, wake_at, false from others) d)
  update durable_runs r set wake_at = least(q.slot, r.deadline_at, r.expire_at), rate_slot_at = q.slot,
                            rate_hold = p_limit || '/' || p_period_ms, updated_at = p_now
    from (select id, v_entries[(j % p_limit)::integer + 1] + (j / p_limit + 1) * v_period as slot from queue) q
   where r.id = q.id;
  return v_entries[1] + v_period; -- the slot of the run met (j = 0)
end
$$;
