// Section 14, a metrics scrape at 1,000,000 finished runs (docs/guide/metrics.md, docs/sql.md
// "durable_metrics"): the latency of durable.metrics() (the one durable_metrics statement) on the
// real server, beside what counting every run by status would cost, and the plan of the
// statement's body. The runs are inserted by generate_series, as scripts/bench/operations.ts does.
import { sql } from "kysely";
import { connect, createDurable, type Durable } from "../../lib/durable";
import { freshServerDatabase } from "./databases";
import { ms, percentile } from "./report";
import { threeSteps } from "./throughput";

export const METRICS_FINISHED_RUNS = 1_000_000;
const LIVE_RUNS = 1_000;
const RECENT_RUNS = 1_000;
const SAMPLES = 50;

async function sample(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 3; i++) await fn(); // warm the plan and the cache
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const began = performance.now();
    await fn();
    times.push(performance.now() - began);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/**
 * 1,000,000 runs finished before the window (a third failed or cancelled), each with a step;
 * 1,000 finished in it and 1,000 live (pending due, waiting on a sleep), each with three steps.
 */
async function fill(durable: Durable): Promise<void> {
  const db = durable.db;
  await sql`
    insert into durable_runs (id, workflow, status, input, finished_at, created_at)
    select 'old-' || n, 'bench-three-steps', (array['completed', 'failed', 'cancelled'])[1 + n % 3], '{}',
           now() - interval '1 hour' - n * interval '1 second', now() - interval '1 hour' - n * interval '1 second'
      from generate_series(1, ${METRICS_FINISHED_RUNS}) n`.execute(db);
  await sql`
    insert into durable_runs (id, workflow, status, input, finished_at)
    select 'recent-' || n, 'bench-three-steps', 'completed', '{}', now() - n * interval '100 milliseconds'
      from generate_series(1, ${RECENT_RUNS}) n`.execute(db);
  await sql`
    insert into durable_runs (id, workflow, status, input, wake_at)
    select 'live-' || n, 'bench-three-steps', case when n % 2 = 0 then 'pending' else 'waiting' end, '{}',
           case when n % 2 = 0 then now() - n * interval '1 second' else now() + interval '1 hour' end
      from generate_series(1, ${LIVE_RUNS}) n`.execute(db);
  await sql`
    insert into durable_steps (run_id, step_id, seq, kind, status, attempt, fence, wake_at)
    select r.id, 's' || k, k, case when k = 3 and r.status = 'waiting' then 'sleep' else 'run' end,
           case when k = 3 and r.status = 'waiting' then 'waiting' else 'completed' end, 1 + k % 2, 0, null
      from durable_runs r, generate_series(1, 3) k
     where r.id like 'recent-%' or r.id like 'live-%'`.execute(db);
  // One step for each of the old runs: the steps table a long history leaves, which a scrape must not scan.
  await sql`
    insert into durable_steps (run_id, step_id, seq, kind, status, attempt, fence)
    select 'old-' || n, 's1', 1, 'run', 'completed', 1, 0 from generate_series(1, ${METRICS_FINISHED_RUNS}) n`.execute(
    db,
  );
  await sql`analyze durable_runs`.execute(db);
  await sql`analyze durable_steps`.execute(db);
}

/** The plan of durable_metrics' body, its parameters bound as a scrape binds them: one line per node. */
async function planShape(durable: Durable): Promise<string[]> {
  const db = durable.db;
  const { rows } = await sql<{ body: string }>`
    select prosrc as body from pg_proc where proname = 'durable_metrics'`.execute(db);
  const body = rows[0]!.body.replace(/p_workflows/g, "$1").replace(/p_window_seconds/g, "$2");
  await sql.raw(`prepare durable_metrics_body(jsonb, integer) as ${body}`).execute(db);
  const plan = await sql<{ "QUERY PLAN": string }>`
    explain (analyze, costs off, timing off, summary on)
    execute durable_metrics_body('["bench-three-steps"]', 300)`.execute(db);
  await sql`deallocate durable_metrics_body`.execute(db);
  return plan.rows
    .map((r) => r["QUERY PLAN"])
    .filter((line) => /(Scan|Join|Loop|Aggregate|Execution Time)/.test(line))
    .map((line) => line.replace(/\s+\(actual.*\)$/, ""));
}

export async function metricsSection(
  heading: (text: string) => void,
  table: (rows: string[][]) => void,
): Promise<void> {
  heading(
    `14. A metrics scrape at ${METRICS_FINISHED_RUNS.toLocaleString("en-US")} finished runs ` +
      `(${LIVE_RUNS.toLocaleString("en-US")} live, ${RECENT_RUNS.toLocaleString("en-US")} finished in the window)`,
  );
  const url = await freshServerDatabase("metrics");
  const durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 2 }),
    workflows: [threeSteps],
    secrets: { durable: "bench" },
    log: () => {},
  });
  try {
    await durable.migrate();
    const filled = performance.now();
    await fill(durable);
    const fillSeconds = (performance.now() - filled) / 1000;
    const read = await durable.metrics();
    const scrape = await sample(() => durable.metrics());
    const countAll = await sample(() =>
      sql`select status, count(*) from durable_runs group by status`.execute(durable.db),
    );
    table([
      ["", "p50", "p99"],
      ["durable.metrics() (one durable_metrics statement)", ms(scrape.p50), ms(scrape.p99)],
      ["for scale: count(*) of every run by status", ms(countAll.p50), ms(countAll.p99)],
    ]);
    table([
      [
        "scrape read",
        `${read.runs.reduce((n, r) => n + r.count, 0)} live runs, ${read.due} due, ` +
          `${read.finished.reduce((n, r) => n + r.count, 0)} finished in ${read.windowSeconds} s, ` +
          `${read.steps.reduce((n, s) => n + s.steps, 0)} steps`,
      ],
      ["fill (generate_series, analyze)", `${fillSeconds.toFixed(1)} s`],
    ]);
    console.log("\n  the plan of durable_metrics' body (explain analyze; scans, joins and aggregates only):");
    for (const line of await planShape(durable)) console.log(`  ${line}`);
  } finally {
    await durable.close();
  }
}
