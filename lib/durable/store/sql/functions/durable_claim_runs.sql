-- durable_claim_runs: claim up to p_count due runs in one round trip (docs/sql.md, "durable_claim_runs";
-- docs/decisions.md, "Batched claims").
--
-- Each run is claimed as durable_claim_run claims one (no run id): its own pick, fence bump, lease
-- and ledger, by the same priority, order, versions, deadlines, concurrency and rate limits, one
-- after the other in one transaction. A later claim sees the earlier ones' writes (a key's count
-- includes the runs this batch claimed, a rate key the starts it admitted) and excludes the runs
-- they took. Only the first claim may wait for a key's lock; the later ones hold claimed rows, so
-- they only try a lock (p_wait false) and skip a key another claimer is deciding: two batches
-- cannot deadlock. The batch stops at the first claim that finds nothing (null) or stops at a
-- bound ({ more: true }).
--
-- Answers { claims: [claim, ...], more }: each claim as durable_claim_run answers it; more: the
-- last claim stopped at a bound with runs it did not reach (the caller claims again for the rest).
-- p_count is bounded to 1..1000 (a worker's most loops).

create or replace function durable_claim_runs(
  p_count integer, p_workflows jsonb, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb
) returns jsonb
language plpgsql as $$
declare
  v_exclude jsonb := coalesce(p_exclude, '[]');
  v_claims jsonb := '[]';
  v_claim jsonb;
  v_more boolean := false;
begin
  for v_index in 1 .. least(greatest(coalesce(p_count, 1), 1), 1000) loop
    v_claim := durable_claim_run(p_workflows, null, p_lease_ms, v_exclude, p_limits, p_versions, p_rates,
                                 true, v_index = 1);
    exit when v_claim is null;
    if v_claim ? 'more' then
      v_more := true;
      exit;
    end if;
    v_claims := v_claims || jsonb_build_array(v_claim);
    v_exclude := v_exclude || jsonb_build_array(v_claim -> 'run' ->> 'id');
  end loop;
  return jsonb_build_object('claims', v_claims, 'more', v_more);
end
$$;
