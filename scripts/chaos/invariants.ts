// I1–I10: what must hold after every chaos scenario (docs/invariants.md), computed from the database
// and the harness's logs. Each check returns how many things it looked at and what it found.
import { sql, type Kysely } from "kysely";

export interface InvariantResult {
  id: string;
  name: string;
  checked: number;
  violations: string[];
}

export interface Expectation {
  /** Receipts each completed run must have. */
  stepsPerRun: number;
  /** Receipts a completed run of these workflows must have instead (a parent of child runs). */
  stepsPerWorkflow?: Record<string, number>;
  /** The workflow's tx steps (one chaos_effects row each) and external-effect steps (the sink). */
  txSteps: string[];
  sinkSteps: string[];
  /** Retries the workflow allows per step (attempt bound). */
  retries: number;
}

/** A row a check's query answers; the invariant files of the scenarios share these helpers. */
export type Row = Record<string, any>;
export const rows = async (db: Kysely<any>, query: ReturnType<typeof sql>): Promise<Row[]> =>
  (await query.execute(db)).rows as Row[];
export const n = async (db: Kysely<any>, query: ReturnType<typeof sql>): Promise<number> =>
  Number((await rows(db, query))[0]!.n);

/** One invariant's result: what it looked at, and the first five rows that break it (and how many more). */
export const invariantResult = (id: string, name: string, checked: number, found: Row[]): InvariantResult => ({
  id,
  name,
  checked,
  violations: found
    .slice(0, 5)
    .map((r) => JSON.stringify(r))
    .concat(found.length > 5 ? [`… ${found.length - 5} more`] : []),
});
/** Records one invariant: what it looked at, and the rows that break it. */
type Add = (id: string, name: string, checked: number, found: Row[]) => void;

export async function checkInvariants(db: Kysely<any>, expect: Expectation): Promise<InvariantResult[]> {
  const results: InvariantResult[] = [];
  const add: Add = (id, name, checked, found) => results.push(invariantResult(id, name, checked, found));
  const receipts = await n(db, sql`select count(*) as n from durable_steps where status in ('completed', 'failed')`);
  await checkReceipts(db, expect, receipts, add);
  await checkRuns(db, expect, receipts, add);
  await checkClaims(db, expect, receipts, add);
  return results;
}

/** I1–I3: receipts, the effects of tx steps, and the fence each receipt was written under. */
async function checkReceipts(db: Kysely<any>, expect: Expectation, receipts: number, add: Add): Promise<void> {
  add(
    "I1",
    "one receipt per (run, step)",
    receipts,
    await rows(
      db,
      sql`
    select run_id, step_id, count(*)::int as receipts from durable_steps group by 1, 2 having count(*) > 1
    union all
    select r.id, '*', count(s.step_id)::int from durable_runs r
      left join durable_steps s on s.run_id = r.id and s.status = 'completed'
     where r.status = 'completed' group by r.id, r.workflow
    having count(s.step_id) <> coalesce((${JSON.stringify(expect.stepsPerWorkflow ?? {})}::jsonb ->> r.workflow)::int,
                                        ${expect.stepsPerRun})`,
    ),
  );

  const tx = JSON.stringify(expect.txSteps);
  add(
    "I2",
    "one effect row per tx receipt, none without one",
    await n(db, sql`select count(*) as n from chaos_effects`),
    await rows(
      db,
      sql`
    select s.run_id, s.step_id, count(e.run_id)::int as effects from durable_steps s
      left join chaos_effects e on e.run_id = s.run_id and e.step_id = s.step_id
     where s.status = 'completed' and s.step_id in (select jsonb_array_elements_text(${tx}::jsonb))
     group by 1, 2 having count(e.run_id) <> 1
    union all
    select e.run_id, e.step_id, count(*)::int from chaos_effects e
     where not exists (select 1 from durable_steps s
                        where s.run_id = e.run_id and s.step_id = e.step_id and s.status = 'completed')
     group by 1, 2`,
    ),
  );

  add(
    "I3",
    "every receipt written under the fence current at its commit",
    await n(db, sql`select count(*) as n from chaos_receipts`),
    await rows(
      db,
      sql`
    select r.run_id, r.step_id, r.fence, c.fence as superseded_by from chaos_receipts r
      join chaos_claims c on c.run_id = r.run_id and c.fence > r.fence and c.at < r.at`,
    ),
  );
}

/** I4–I7: runs end terminal and stay so, the sink applies each key once, nothing commits after the end. */
async function checkRuns(db: Kysely<any>, expect: Expectation, receipts: number, add: Add): Promise<void> {
  const runs = await n(db, sql`select count(*) as n from durable_runs`);
  add(
    "I4",
    "every run terminal at the end",
    runs,
    await rows(
      db,
      sql`
    select id, status, wake_at from durable_runs where status not in ('completed', 'failed', 'cancelled')`,
    ),
  );

  add(
    "I5",
    "no run leaves a terminal state",
    runs,
    await rows(db, sql`select * from chaos_violations where invariant = 'I5'`),
  );

  const sinks = JSON.stringify(expect.sinkSteps);
  add(
    "I6",
    "the sink applies each external key once (deliveries ≥ 1)",
    await n(db, sql`select count(*) as n from chaos_sink`),
    await rows(
      db,
      sql`
    select s.run_id, s.step_id, s.external_key from durable_steps s
     where s.status = 'completed' and s.step_id in (select jsonb_array_elements_text(${sinks}::jsonb))
       and not exists (select 1 from chaos_sink k where k.external_key = s.external_key)
       -- A webhook delivery's step (scenario 14) reaches the receiver, not the sink: EV4 checks it.
       and not exists (select 1 from durable_runs d where d.id = s.run_id and d.workflow = 'durable.webhook')
    union all
    select null, null, external_key from chaos_sink where deliveries < 1`,
    ),
  );

  add(
    "I7",
    "no step commits after its run is terminal",
    receipts,
    await rows(
      db,
      sql`
    select r.run_id, r.step_id, r.at, f.at as finished_at from chaos_receipts r
      join chaos_finished f on f.run_id = r.run_id and f.at < r.at`,
    ),
  );
}

/** I8–I10: attempts within the limit, no leaked session, no claim of a live lease. */
async function checkClaims(db: Kysely<any>, expect: Expectation, receipts: number, add: Add): Promise<void> {
  add(
    "I8",
    "attempts within the limit (1 + retries + lost claims)",
    receipts,
    await rows(
      db,
      sql`
    select s.run_id, s.step_id, s.attempt, lost.n as lost_claims from durable_steps s
      cross join lateral (select count(*)::int as n from chaos_claims c
                           where c.run_id = s.run_id and c.previous_status = 'running' and c.status <> 'cancelled') lost
     where s.attempt > 1 + ${expect.retries}::int + lost.n`,
    ),
  );

  const sessions = await rows(
    db,
    sql`
    select pid, application_name, state from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid()
       and (state like 'idle in transaction%' or application_name = 'chaos-worker')`,
  );
  add("I9", "no idle-in-transaction session, no leaked worker connection", sessions.length, sessions);

  add(
    "I10",
    "no claim takes a run whose lease is still live (server clock)",
    await n(db, sql`select count(*) as n from chaos_claims`),
    await rows(
      db,
      sql`
    select run_id, fence, at, previous_lease_until from chaos_claims
     where previous_status = 'running' and status <> 'cancelled' and at < previous_lease_until`,
    ),
  );
}
