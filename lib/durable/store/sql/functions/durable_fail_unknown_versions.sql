-- durable_fail_unknown_versions(versions, limit): with createDurable({ unknownVersion: "fail" }),
-- fails up to p_limit due runs of the registered names whose version the instance does not have
-- (docs/sql.md, "Versions").
--
-- Oldest first, for update skip locked, each under a new fence (a stale owner can no longer
-- write), with error unknown_version naming the version and the registered ones, and a
-- version.unknown event; the runs waiting on them are made due. A running run under a live lease is not due, so it is left to its owner
-- (who has the version). Answers the ids failed.

create or replace function durable_fail_unknown_versions(p_versions jsonb, p_limit integer) returns jsonb
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
  v_ids jsonb;
begin
  with due as (
    select id from durable_runs r
     where status in ('pending', 'running', 'waiting') and wake_at <= v_now
       and p_versions ? workflow and not durable_version_registered(p_versions, r.workflow, r.version)
     order by wake_at
     limit p_limit
     for update skip locked
  ), failed as (
    update durable_runs r set
      status = 'failed', fence = fence + 1, wake_at = null, waiting_for = null, lease_until = null,
      error = jsonb_build_object(
        'code', 'unknown_version', 'name', 'UnknownVersionError',
        'message', format('workflow "%s" has no version %s in this deployment (it registers %s)',
                          r.workflow, coalesce(quote_literal(r.version), 'without a version'),
                          p_versions -> r.workflow)),
      updated_at = v_now, finished_at = v_now
      from due where r.id = due.id
    returning r.id, r.fence, r.version
  ), noted as (
    insert into durable_events (run_id, kind, fence, data)
    select id, 'version.unknown', fence, jsonb_build_object('version', version) from failed
  )
  select coalesce(jsonb_agg(id), '[]'::jsonb) into v_ids from failed;
  perform durable_wake_waiters(x, v_now) from jsonb_array_elements_text(v_ids) x;
  return v_ids;
end
$$;
