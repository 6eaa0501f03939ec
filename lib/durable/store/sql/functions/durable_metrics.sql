-- durable_metrics(workflows, window_seconds): one scrape's figures in one statement (docs/sql.md,
-- "durable_metrics"; docs/guide/metrics.md). Only the runs an index finds without reading the
-- finished ones: the live runs (pending, running, waiting) over durable_runs_due's predicate, and
-- the runs finished in the last p_window_seconds over a range of durable_runs_finished. Counting
-- every finished run by status would read them all: a scrape's cost grows with the live runs and
-- the window's throughput, never with the history kept.
--
-- A workflow that p_workflows (the instance's registered names) does not list is answered as null:
-- its runs count under no workflow label, so the labels stay bounded by the code, not by the data.
--
-- Answers { runs: [{ workflow, status, count }], finished: [{ workflow, status, count }],
-- due, oldestDueSeconds, expiredLeases, waits: [{ kind, count }],
-- steps: [{ workflow, steps, retries }] }.

-- jit off: the planner cannot know the window's rows (a parameter's range) and estimates a third of
-- the finished runs, a cost over jit_above_cost at 1,000,000 runs; compiling the plan then took a
-- second where running it takes milliseconds (npm run bench -- --metrics).
create or replace function durable_metrics(p_workflows jsonb, p_window_seconds integer) returns jsonb
language sql stable set jit = off as $$
  with clock as (select durable_now() as now),
  live as (
    select case when p_workflows ? r.workflow then r.workflow::text end as workflow,
           r.id, r.status, r.wake_at, r.lease_until
      from durable_runs r
     where r.status in ('pending', 'running', 'waiting')),
  finished as (
    select case when p_workflows ? r.workflow then r.workflow::text end as workflow, r.id, r.status
      from durable_runs r
     where r.status in ('completed', 'failed', 'cancelled')
       and r.finished_at >= durable_now() - greatest(p_window_seconds, 0) * interval '1 second'),
  in_view as (select workflow, id from live union all select workflow, id from finished),
  -- Each run's steps through durable_steps' primary key (lateral: a lookup per run in view, never a
  -- scan of the steps of every run kept).
  step_totals as (
    select v.workflow, sum(t.steps) as steps, sum(t.retries) as retries
      from in_view v
      cross join lateral (
        select count(*) as steps, coalesce(sum(greatest(s.attempt - 1, 0)), 0) as retries
          from durable_steps s where s.run_id = v.id and s.kind <> 'patch') t
     where t.steps > 0
     group by v.workflow)
  select jsonb_build_object(
    'runs', (select coalesce(jsonb_agg(jsonb_build_object('workflow', workflow, 'status', status, 'count', n)
                                   order by workflow, status), '[]')
               from (select workflow, status, count(*) as n from live group by workflow, status) g),
    'finished', (select coalesce(jsonb_agg(jsonb_build_object('workflow', workflow, 'status', status, 'count', n)
                                   order by workflow, status), '[]')
                   from (select workflow, status, count(*) as n from finished group by workflow, status) g),
    'due', (select count(*) from live, clock where live.wake_at <= clock.now),
    'oldestDueSeconds', (select extract(epoch from clock.now - min(live.wake_at))
                           from live, clock where live.wake_at <= clock.now group by clock.now),
    'expiredLeases', (select count(*) from live, clock where live.status = 'running' and live.lease_until < clock.now),
    'waits', (select coalesce(jsonb_agg(jsonb_build_object('kind', kind, 'count', n) order by kind), '[]')
                from (select s.kind, count(*) as n
                        from live cross join lateral (
                               select w.kind from durable_steps w
                                where w.run_id = live.id and w.status = 'waiting') s
                       where live.status = 'waiting'
                       group by s.kind) w),
    'steps', (select coalesce(jsonb_agg(jsonb_build_object('workflow', workflow, 'steps', steps, 'retries', retries)
                                   order by workflow), '[]')
                from step_totals))
  from clock
$$;
