// The chaos database: the engine's schema plus what only the harness needs to judge a scenario:
// the effect and sink tables the workflow writes, and triggers that log every fence change, every
// receipt and every run inserted, and catch a run leaving a terminal state, on the server's real
// clock (never durable_now(), which a broken build under test may have replaced).
import { sql, type Kysely } from "kysely";
import { connect } from "../../lib/durable/drivers/connect";
import { createServerDatabase } from "../support/server-database";
import { migrate } from "../../lib/durable/store/migrate";

export async function createChaosDatabase(name: string): Promise<{ url: string; db: Kysely<any> }> {
  const url = await createServerDatabase(name);
  const db = await connect(url, { driver: "pg", poolSize: 4 });
  await migrate(db);
  await sql.raw(HARNESS_SQL).execute(db);
  return { url, db };
}

const HARNESS_SQL = `
create table chaos_effects (run_id text not null, step_id text not null, fence bigint not null);
create table chaos_sink (external_key text primary key, deliveries int not null default 1);
create table chaos_violations (invariant text not null, detail text not null);

-- Every fence change (claim, heal, cancel) with the lease it replaced.
create table chaos_claims (
  run_id text not null, fence bigint not null, previous_status text not null,
  previous_lease_until timestamptz, lease_until timestamptz, status text not null,
  at timestamptz not null default clock_timestamp()
);
create function chaos_log_fence() returns trigger language plpgsql as $$
begin
  insert into chaos_claims (run_id, fence, previous_status, previous_lease_until, lease_until, status)
  values (new.id, new.fence, old.status, old.lease_until, new.lease_until, new.status);
  return new;
end $$;
create trigger chaos_log_fence after update on durable_runs
  for each row when (new.fence is distinct from old.fence) execute function chaos_log_fence();

-- Every insert of a run row (a start, a child inserted by its parent's suspension or start step):
-- a child's id inserted twice would show (I11).
create table chaos_inserts (run_id text not null, parent_id text, at timestamptz not null default clock_timestamp());
create function chaos_log_insert() returns trigger language plpgsql as $$
begin
  insert into chaos_inserts (run_id, parent_id) values (new.id, new.parent_id);
  return new;
end $$;
create trigger chaos_log_insert after insert on durable_runs for each row execute function chaos_log_insert();

-- A run leaving a terminal state is a violation the moment it happens (I5).
create function chaos_terminal_guard() returns trigger language plpgsql as $$
begin
  insert into chaos_violations values ('I5', format('run %s left %s for %s', old.id, old.status, new.status));
  return new;
end $$;
create table chaos_finished (
  run_id text not null, status text not null, at timestamptz not null default clock_timestamp()
);
create function chaos_log_finish() returns trigger language plpgsql as $$
begin
  insert into chaos_finished (run_id, status) values (new.id, new.status);
  return new;
end $$;
create trigger chaos_log_finish after update on durable_runs
  for each row when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
  execute function chaos_log_finish();
create trigger chaos_terminal_guard after update on durable_runs
  for each row when (old.status in ('completed', 'failed', 'cancelled') and new.status is distinct from old.status)
  execute function chaos_terminal_guard();

-- Every outcome write with the fence it carried. The receipt statement locks the run row (the
-- fence check), so a claim that supersedes that fence is logged after it, unless the fence is gone.
create table chaos_receipts (
  run_id text not null, step_id text not null, fence bigint not null, status text not null,
  at timestamptz not null default clock_timestamp()
);
create function chaos_receipt_log() returns trigger language plpgsql as $$
begin
  insert into chaos_receipts (run_id, step_id, fence, status) values (new.run_id, new.step_id, new.fence, new.status);
  return new;
end $$;
create trigger chaos_receipt_log after insert or update on durable_steps
  for each row when (new.status in ('completed', 'failed')) execute function chaos_receipt_log();
`;
