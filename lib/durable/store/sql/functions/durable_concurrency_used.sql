-- durable_concurrency_used(workflow, key, run_id, now): how many runs of a workflow and
-- concurrency key are executing (running under a live lease), other than p_run_id: what a claim
-- counts against the workflow's limit (docs/sql.md, "Scaling out"). Served by the partial index
-- durable_runs_concurrency.

create or replace function durable_concurrency_used(p_workflow text, p_key text, p_run_id text, p_now timestamptz)
returns bigint
language sql stable as $$
  select count(*) from durable_runs
   where workflow = p_workflow and concurrency_key = p_key and status = 'running'
     and lease_until > p_now and id <> p_run_id
$$;
