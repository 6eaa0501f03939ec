-- durable_count_due(workflows, cap, versions): how many runs a claim would take now, counted up
-- to p_cap over the due index, only runs of a registered (workflow, version): what a tick asks
-- before it fans out (docs/sql.md, "Scaling out").

create or replace function durable_count_due(p_workflows jsonb, p_cap integer, p_versions jsonb) returns integer
language sql stable as $$
  select count(*)::integer from (
    select 1 from durable_runs r
     where status in ('pending', 'running', 'waiting') and wake_at <= durable_now()
       and workflow in (select jsonb_array_elements_text(p_workflows))
       and durable_version_registered(p_versions, r.workflow, r.version)
     limit p_cap) due
$$;

-- The two-argument form (migration 0004 as it shipped), for instances of that release during a
-- deploy: any version.
create or replace function durable_count_due(p_workflows jsonb, p_cap integer) returns integer
language sql stable as $$
  select durable_count_due(p_workflows, p_cap, null::jsonb)
$$;
