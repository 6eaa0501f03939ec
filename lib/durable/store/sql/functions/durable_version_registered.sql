-- durable_version_registered(versions, workflow, version): whether the instance that passes
-- p_versions registered this (workflow, version) (docs/sql.md, "Versions").
--
-- p_versions maps each registered workflow name to the versions it registered, '' standing for
-- "no version" (a run's version is null when its workflow declares none, and for runs started
-- before migration 0005). A null map accepts any: the older claim forms pass it.

create or replace function durable_version_registered(p_versions jsonb, p_workflow text, p_version text) returns boolean
language sql immutable as $$
  select p_versions is null or coalesce((p_versions -> p_workflow) ? coalesce(p_version, ''), false)
$$;
