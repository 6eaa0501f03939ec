-- durable_open_descendants(run_id, with_followups): the run's descendants that have not ended,
-- each with its depth (1: a child), reached through runs that have not ended (docs/sql.md, "Child
-- runs"): what a cascading cancel locks and cancels (durable_cancel_run, with_followups false), and
-- what the test harness drives with a run (listOpenDescendants, through the one-argument form).
-- A plain read, in the snapshot of the statement that calls it.
--
-- with_followups false leaves out the follow-ups an end of the run started (durable_start_followups,
-- 0017; marked followups = {"followup": true}) and what is below them: they are its children but
-- not part of it, so a retried run cancelled again leaves the hooks of its earlier end to finish.

--
-- plpgsql, not sql as before: PostgreSQL checks a sql body's columns when it creates the function,
-- and the set is also applied to a schema before 0017 (tests/postgres/narrow-row-upgrade.test.ts
-- installs 0001-0012 with today's set), where `followups` does not exist yet.

create or replace function durable_open_descendants(p_run_id text, p_with_followups boolean)
returns table (id text, depth integer)
language plpgsql stable as $$
begin
  return query
  with recursive tree (id, depth) as (
    select r.id::text, 1 from durable_runs r
     where r.parent_id = p_run_id and r.status in ('pending', 'running', 'waiting')
       and (p_with_followups or r.followups is distinct from '{"followup": true}'::jsonb)
    union
    select r.id::text, t.depth + 1 from durable_runs r join tree t on r.parent_id = t.id
     where r.status in ('pending', 'running', 'waiting')
  )
  select tree.id, max(tree.depth)::integer from tree group by tree.id;
end
$$;

-- The one-argument form (function sets up to 27): every open descendant, follow-ups included.
create or replace function durable_open_descendants(p_run_id text) returns table (id text, depth integer)
language sql stable as $$
  select t.id, t.depth from durable_open_descendants(p_run_id, true) t
$$;
