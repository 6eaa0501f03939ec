// The drain every chaos scenario ends with (docs/invariants.md, "The harness"): six tick loops in the harness
// process finish what the workers left, and say whether runs were left because they were stuck or because the
// drain was slow.
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { connect, createDurable } from "../../lib/durable";
import { attachSink, chaosWebhooks, chaosWorkflows } from "./workflow";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs not yet terminal, and how far the runs got: runs terminal plus steps recorded (completed or failed). */
async function tally(db: Kysely<any>): Promise<{ left: number; done: number }> {
  const { rows } = await sql<{ left: number; done: number }>`
    select (select count(*) from durable_runs
             where status not in ('completed', 'failed', 'cancelled'))::int as left,
           ((select count(*) from durable_runs where status in ('completed', 'failed', 'cancelled')) +
            (select count(*) from durable_steps where status in ('completed', 'failed')))::int as done`.execute(db);
  return rows[0]!;
}

/**
 * Ticks in this process until every run is terminal (leases of killed owners run out on the real clock). It tells
 * a stuck run from a slow drain: it gives up when no run has finished and no step was recorded for `stallMs`
 * (several leases: a run whose lease ran out is due again within one), or after `capMs` in all. A drain on a
 * loaded machine takes longer than one that is not; a fixed limit on the whole drain reported slow runs as
 * unfinished (docs/invariants.md, I4).
 */
export async function drain(url: string, db: Kysely<any>, budgetMs = 3_000, stallMs = 30_000, capMs = 600_000) {
  await waitForWorkerSessionsToClose(db);
  const drainUrl = new URL(url);
  drainUrl.searchParams.set("application_name", "chaos-drain");
  const sinkPool = new pg.Pool({ connectionString: drainUrl.toString(), max: 2 });
  attachSink(sinkPool);
  const durable = createDurable({
    db: await connect(drainUrl.toString(), { driver: "pg", poolSize: 8 }),
    workflows: chaosWorkflows,
    webhooks: chaosWebhooks(),
    secrets: { durable: "chaos" },
    defaults: { lease: "1s", margin: "300ms" },
    log: () => {},
  });
  const start = performance.now();
  // Progress is a run finishing or a step recorded (a parent's suspension may insert runs meanwhile: the
  // unfinished count can grow).
  let { left, done } = await tally(db);
  let progressed = start;
  const draining = () => left > 0 && performance.now() - progressed < stallMs && performance.now() - start < capMs;
  // Six tick loops at once, like six function instances.
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (draining()) {
        const report = await durable.tick({ budgetMs });
        const now = await tally(db);
        if (now.done > done) progressed = performance.now();
        done = Math.max(done, now.done);
        left = now.left;
        if (report.claimed === 0) await sleep(200);
      }
    }),
  );
  const seconds = Math.round((performance.now() - start) / 1000);
  const problems: string[] = [];
  if (left > 0 && performance.now() - progressed >= stallMs) {
    const stalled = `nothing finished or recorded in the last ${stallMs / 1000} s of draining (${seconds} s)`;
    problems.push(`${left} runs unfinished: ${stalled}`);
  } else if (left > 0) {
    problems.push(`${left} runs unfinished after ${seconds} s of draining, still moving (slow)`);
  }
  if (process.env.CHAOS_DEBUG) console.error(`[chaos] drained in ${seconds} s`);
  await durable.close();
  await sinkPool.end();
  return problems;
}

export async function waitForWorkerSessionsToClose(db: Kysely<any>) {
  for (let i = 0; i < 50; i++) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'chaos-worker'`.execute(db);
    if (rows[0]!.n === 0) return;
    await sleep(100);
  }
}
