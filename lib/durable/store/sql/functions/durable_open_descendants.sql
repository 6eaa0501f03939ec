-- durable_open_descendants(run_id): the run's descendants that have not ended, each with its
-- depth (1: a child), reached through runs that have not ended (docs/sql.md, "Child runs"): what
-- a cascading cancel locks and cancels (durable_cancel_run), and what the test harness drives
-- with a run (listOpenDescendants). A plain read, in the snapshot of the statement that calls it.
-- The follow-ups an earlier end of the run started (durable_start_followups, 0017; marked by
-- followups = {"followup": true}) are its children but not part of it: a retried run cancelled
-- again leaves them, and the runs they started, to finish.

create or replace function durable_open_descendants(p_run_id text) returns table (id text, depth integer)
language sql stable as $$
  with recursive tree (id, depth) as (
    select r.id, 1 from durable_runs r
     where r.parent_id = p_run_id and r.status in ('pending', 'running', 'waiting')
       and r.followups is distinct from '{"followup": true}'::jsonb
    union
    select r.id, t.depth + 1 from durable_runs r join tree t on r.parent_id = t.id
     where r.status in ('pending', 'running', 'waiting')
  )
  select tree.id, max(tree.depth)::integer from tree group by tree.id
$$;
