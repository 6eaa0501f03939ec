-- durable_due_priority(workflows, now, below): the highest priority below p_below (any, when null)
-- at which a run of these workflows is due: the claim's priority probe (docs/sql.md,
-- "durable_claim_run"). It reads the first such entry of durable_runs_due_priority (priority desc,
-- wake_at), whose order is the query's.
--
-- A function of its own for `set enable_seqscan = off, enable_sort = off` (function set 24): plpgsql
-- plans a session's first five calls for their values, from the table's statistics, and those of a
-- table analyzed while its runs were finished (a new install, a drain) priced a sequential scan and
-- a sort of every due run below the index: 0.7 to 1.5 ms a claim against 0.01 ms, and a session
-- whose estimates stayed so kept that plan (docs/performance.md, "The priority probe"). The settings
-- hold only here, not for the rest of the claim.

create or replace function durable_due_priority(p_workflows text[], p_now timestamptz, p_below integer)
returns integer
language plpgsql stable set enable_seqscan = off set enable_sort = off as $$
begin
  if p_below is null then
    return (select priority from durable_runs
             where wake_at is not null and wake_at <= p_now and workflow = any (p_workflows)
             order by priority desc, wake_at
             limit 1);
  end if;
  return (select priority from durable_runs
           where wake_at is not null and wake_at <= p_now and priority < p_below
             and workflow = any (p_workflows)
           order by priority desc, wake_at
           limit 1);
end
$$;
