-- durable_clear_lost_claims(run_id, now): the first receipt after a lost claim clears the run's
-- lost_claims and lost_lease_until (docs/sql.md, "durable_record_step"). The caller holds the
-- row's share lock under its fence check; the row is locked FOR NO KEY UPDATE SKIP LOCKED, so when
-- another receipt of the run holds a share lock too this clears nothing and never waits (two
-- receipts both waiting to upgrade their share locks would deadlock). A clear left undone stays
-- for a later receipt or the end; lost_claims may overcount meanwhile (docs/rules.md, rule 7a).

create or replace function durable_clear_lost_claims(p_run_id text, p_now timestamptz) returns void
language plpgsql as $$
begin
  perform 1 from durable_runs where id = p_run_id for no key update skip locked;
  if found then
    update durable_runs set lost_claims = 0, lost_lease_until = null, updated_at = p_now
     where id = p_run_id;
  end if;
end
$$;
