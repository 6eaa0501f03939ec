// Retention against 1,000,000 finished runs (docs/guide/retention.md, "Retention"): what a tick costs with
// retention on and nothing due, compacting, or deleting runs, against the same tick with retention
// off; and the claim's latency while retention works, against retention off and an empty table.
// The finished runs are made as scripts/bench/claim-latency.ts makes them (generate_series), each
// with two step rows and an event (one in ten with a signal and a stream chunk), finished between
// 30 and about 18 days ago.
import pg from "pg";
import { connect, createDurable, type Durable, type RetentionOptions, type TickReport } from "../../lib/durable";
import { createCompactor } from "../../lib/durable/engine/retention";
import { compactStatement } from "../../lib/durable/store";
import { sampleClaim } from "./claim-latency";
import { freshServerDatabase } from "./databases";
import { percentile } from "./report";
import { threeSteps } from "./throughput";

export const BLOCK = 25;

/** Nothing is due: every age is longer than the oldest run's. */
export const IDLE: RetentionOptions = { steps: "60d", events: "60d" };
/** Step rows and events of runs finished more than 7 days ago: all 1,000,000 are due. */
export const COMPACTING: RetentionOptions = { steps: "7d", events: "7d", runs: "never" };
/** Run rows finished more than 25 days ago: the oldest 432,000. */
export const DELETING: RetentionOptions = { runs: "25d" };

export interface TickFigures {
  label: string;
  ticks: number;
  p50: number;
  p99: number;
  mean: number;
  /** Mean of the tick report's `compacted` (runs compacted or deleted, events deleted). */
  compacted: number;
  /** Rows gone from durable_runs, durable_steps and durable_events per tick (counted before and after). */
  rowsPerTick: { runs: number; steps: number; events: number } | null;
}

export interface ClaimFigures {
  label: string;
  samples: number;
  p50: number;
  p99: number;
}

export interface RetentionBenchReport {
  finished: number;
  fillSeconds: number;
  ticks: TickFigures[];
  claims: ClaimFigures[];
  /** Slices the concurrent compactor ran while its claims were sampled, and the rows they took. */
  concurrentSlices: { slices: number; compacted: number };
  /** EXPLAIN (ANALYZE) of one compaction statement (rolled back): every pick through its index. */
  plan: string[];
}

async function instance(url: string, retention?: RetentionOptions): Promise<Durable> {
  return createDurable({
    db: await connect(url, { driver: "pg", poolSize: 2 }),
    workflows: [threeSteps],
    secrets: { durable: "bench" },
    log: () => {},
    retention,
  });
}

async function fill(client: pg.Client, finished: number): Promise<void> {
  // Finished rows satisfy the check constraint: a terminal status and no wake_at.
  await client.query(
    `insert into durable_runs (id, workflow, status, input, output, wake_at, fence, attempts,
                               created_at, updated_at, finished_at)
     select 'done-' || lpad(g::text, 7, '0'), $1, 'completed', '{}'::jsonb, '1'::jsonb, null, 1, 1, ts, ts, ts
       from generate_series(1, $2::int) g,
            lateral (select now() - interval '30 days' + g * interval '1 second') t(ts)`,
    [threeSteps.name, finished],
  );
  await client.query(
    `insert into durable_steps (run_id, step_id, seq, kind, status, result, fence, started_at, completed_at,
                                updated_at)
     select 'done-' || lpad(g::text, 7, '0'), s, i, 'run', 'completed', '1'::jsonb, 1, ts, ts, ts
       from generate_series(1, $1::int) g,
            lateral (select now() - interval '30 days' + g * interval '1 second') t(ts),
            unnest(array['call', 'stamp']) with ordinality u(s, i)`,
    [finished],
  );
  // A signal and a stream chunk for one run in ten.
  await client.query(
    `insert into durable_signals (run_id, name, payload, taken_by)
     select 'done-' || lpad(g::text, 7, '0'), 'go', '{}'::jsonb, 'go' from generate_series(10, $1::int, 10) g`,
    [finished],
  );
  await client.query(
    `insert into durable_stream_chunks (run_id, seq, step_id, attempt, data)
     select 'done-' || lpad(g::text, 7, '0'), 1, 'call', 1, '"x"'::jsonb from generate_series(10, $1::int, 10) g`,
    [finished],
  );
  await client.query(
    `insert into durable_events (run_id, kind, created_at)
     select 'done-' || lpad(g::text, 7, '0'), 'budget.yield', now() - interval '30 days' + g * interval '1 second'
       from generate_series(1, $1::int) g`,
    [finished],
  );
  await client.query("vacuum analyze");
}

async function rowCounts(client: pg.Client) {
  const { rows } = await client.query(
    `select (select count(*) from durable_runs)::int as runs, (select count(*) from durable_steps)::int as steps,
            (select count(*) from durable_events)::int as events`,
  );
  return rows[0] as { runs: number; steps: number; events: number };
}

/** `ticks` ticks of `durable` with nothing due to claim, timed; the rows they deleted when `client` counts them. */
async function timeTicks(durable: Durable, ticks: number, times: number[], reports: TickReport[]): Promise<void> {
  for (let i = 0; i < ticks; i++) {
    const t0 = performance.now();
    const report = await durable.tick({ budgetMs: 55_000 });
    times.push(performance.now() - t0);
    reports.push(report);
    if (report.warnings.length) throw new Error(`tick warned: ${report.warnings.join("; ")}`);
  }
}

function tickFigures(
  label: string,
  times: number[],
  reports: TickReport[],
  rows: TickFigures["rowsPerTick"],
): TickFigures {
  return {
    label,
    ticks: times.length,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    compacted: reports.reduce((a, r) => a + r.compacted, 0) / reports.length,
    rowsPerTick: rows,
  };
}

async function explainCompaction(client: pg.Client, db: Durable["db"]): Promise<string[]> {
  const compiled = compactStatement({
    stepsMs: 7 * 86_400_000,
    runsMs: 25 * 86_400_000,
    eventsMs: 7 * 86_400_000,
    limits: { compact: 100, runs: 100, events: 100 },
  }).compile(db);
  await client.query("begin");
  try {
    const { rows } = await client.query(
      `explain (analyze, costs off, timing off, summary on) ${compiled.sql}`,
      compiled.parameters as unknown[],
    );
    return rows.map((r) => r["QUERY PLAN"] as string);
  } finally {
    await client.query("rollback");
  }
}

export async function retentionBench(finished: number, ticks: number, samples: number): Promise<RetentionBenchReport> {
  const url = await freshServerDatabase("retention");
  const emptyUrl = await freshServerDatabase("retention_empty");
  const off = await instance(url);
  await off.migrate();
  const emptyInstance = await instance(emptyUrl);
  await emptyInstance.migrate();
  await emptyInstance.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const emptyClient = new pg.Client({ connectionString: emptyUrl });
  await emptyClient.connect();
  const durables: Durable[] = [off];
  try {
    const t0 = performance.now();
    await fill(client, finished);
    const fillSeconds = (performance.now() - t0) / 1000;
    const tickTable = await measureTicks(client, url, off, ticks, durables);
    const { times, concurrentSlices } = await measureClaims(client, emptyClient, url, samples, durables);
    // The plan with compacted runs in the table (and fresh statistics).
    await client.query("analyze");
    const plan = await explainCompaction(client, off.db);

    // ── Deleting again, in this throwaway database only, without durable_signals_run (0005): what
    // the index saves, since without it every deleted run's cascade reads all of durable_signals ──
    await client.query("drop index durable_signals_run");
    const unindexed = await instance(url, DELETING);
    durables.push(unindexed);
    const deletedUnindexed = await phase(client, unindexed, ticks);
    tickTable.splice(
      3,
      0,
      tickFigures(
        "same, without the index durable_signals_run",
        deletedUnindexed.run.times,
        deletedUnindexed.run.reports,
        deletedUnindexed.rows,
      ),
    );

    const claim = (label: string, t: number[]): ClaimFigures => ({
      label,
      samples: t.length,
      p50: percentile(t, 50),
      p99: percentile(t, 99),
    });
    return {
      finished,
      fillSeconds,
      ticks: tickTable,
      claims: [
        claim("empty table", times.empty),
        claim(`${finished.toLocaleString("en-US")} finished runs, retention off`, times.off),
        claim("same, idle after each claim as long as a slice", times.paused),
        claim("same, a slice after each claim (as a tick)", times.sequential),
        claim("same, another instance compacting meanwhile", times.concurrent),
      ],
      concurrentSlices,
      plan,
    };
  } finally {
    await client.end();
    await emptyClient.end();
    for (const durable of durables) await durable.close();
  }
}

/** `ticks` ticks of `durable`, timed, with the rows of each kind they deleted per tick. */
async function phase(client: pg.Client, durable: Durable, ticks: number) {
  const run = { times: [] as number[], reports: [] as TickReport[] };
  const before = await rowCounts(client);
  await timeTicks(durable, ticks, run.times, run.reports);
  const after = await rowCounts(client);
  const per = (k: keyof typeof before) => (before[k] - after[k]) / ticks;
  return { run, rows: { runs: per("runs"), steps: per("steps"), events: per("events") } };
}

/** Ticks: off and idle alternate in blocks; then deleting, then compacting, each alone. */
async function measureTicks(
  client: pg.Client,
  url: string,
  off: Durable,
  ticks: number,
  durables: Durable[],
): Promise<TickFigures[]> {
  const idle = await instance(url, IDLE);
  const deleting = await instance(url, DELETING);
  const compacting = await instance(url, COMPACTING);
  durables.push(idle, deleting, compacting);
  const warm = { times: [] as number[], reports: [] as TickReport[] };
  for (const durable of [off, idle]) await timeTicks(durable, 20, warm.times, warm.reports);
  const offRun = { times: [] as number[], reports: [] as TickReport[] };
  const idleRun = { times: [] as number[], reports: [] as TickReport[] };
  for (let done = 0; done < ticks; done += BLOCK) {
    const n = Math.min(BLOCK, ticks - done);
    await timeTicks(off, n, offRun.times, offRun.reports);
    await timeTicks(idle, n, idleRun.times, idleRun.reports);
  }
  const deleted = await phase(client, deleting, ticks);
  const compacted = await phase(client, compacting, ticks);
  return [
    tickFigures("retention off", offRun.times, offRun.reports, null),
    tickFigures("retention on, nothing due", idleRun.times, idleRun.reports, null),
    tickFigures("retention on, deleting runs (runs: 25d)", deleted.run.times, deleted.run.reports, deleted.rows),
    tickFigures(
      "retention on, compacting (steps: 7d, events: 7d)",
      compacted.run.times,
      compacted.run.reports,
      compacted.rows,
    ),
  ];
}

/** Claims: empty table, 1M off, 1M with the tick's slice after each claim, 1M with a compactor racing. */
async function measureClaims(
  client: pg.Client,
  emptyClient: pg.Client,
  url: string,
  samples: number,
  durables: Durable[],
) {
  const slicer = await instance(url);
  durables.push(slicer);
  // A tick's slice, as create-durable calls it after its claims.
  const compactor = createCompactor({
    db: slicer.db,
    retention: { steps: "7d", events: "7d", runs: "25d" },
    log: () => {},
  });
  const times = {
    empty: [] as number[],
    off: [] as number[],
    sequential: [] as number[],
    paused: [] as number[],
    concurrent: [] as number[],
  };
  for (let i = 0; i < 20; i++) {
    await sampleClaim(emptyClient);
    await sampleClaim(client);
  }
  const concurrentSlices = { slices: 0, compacted: 0 };
  for (let done = 0; done < samples; done += BLOCK) {
    const n = Math.min(BLOCK, samples - done);
    for (let i = 0; i < n; i++) times.empty.push(await sampleClaim(emptyClient));
    for (let i = 0; i < n; i++) times.off.push(await sampleClaim(client));
    const sliceMs: number[] = [];
    for (let i = 0; i < n; i++) {
      times.sequential.push(await sampleClaim(client));
      const t0 = performance.now();
      await compactor.slice();
      sliceMs.push(performance.now() - t0);
    }
    // The control: retention off, idle between claims as long as those slices took. A claim after
    // a pause is slower than one right after another (caches and CPU gone cold), slice or no slice.
    for (let i = 0; i < n; i++) {
      times.paused.push(await sampleClaim(client));
      await new Promise((resolve) => setTimeout(resolve, sliceMs[i]));
    }
    let stop = false;
    const racing = (async () => {
      while (!stop) {
        const report = (await compactor.slice())!;
        concurrentSlices.slices++;
        concurrentSlices.compacted += report.runsCompacted + report.runsDeleted + report.eventsDeleted;
      }
    })();
    for (let i = 0; i < n; i++) times.concurrent.push(await sampleClaim(client));
    stop = true;
    await racing;
  }
  return { times, concurrentSlices };
}
