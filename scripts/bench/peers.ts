// Peers in the same run (docs/performance.md, "Peers"): durable-next beside graphile-worker and
// pg-boss, on one workload. A job is 3 receipt inserts, each its own transaction: for the peers a
// handler that inserts 3 rows into a receipts table (primary key (job, step), on conflict do
// nothing); for us a run of 3 `run` steps, whose receipts the engine writes. Jobs are enqueued
// first (untimed), then drained by 1 or 10 concurrent loops; each drain has a fresh database.
// Latency is enqueue to completion of one job on an idle system, seen through LISTEN on a trigger
// that fires when the job's completion commits.
import { Logger, makeWorkerUtils, run as runGraphile, runMigrations, type Runner } from "graphile-worker";
import pg from "pg";
import PgBoss from "pg-boss";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "../../lib/durable";
import { coldStart, printColdStart } from "./cold-start";
import { freshServerDatabase } from "./databases";
import { ms, percentile, ratio } from "./report";
import { type StatementTimes, statementTimer } from "./throughput";

export const PEER_JOBS = 2_000;
export const PEER_LOOPS = [1, 10] as const;
export const PEER_REPETITIONS = 3;
export const PEER_LATENCY_SAMPLES = 30;
export const COLD_START_SAMPLES = 15;
/** pg-boss polls; this is the shortest interval it accepts (pollingIntervalSeconds >= 0.5). */
export const PG_BOSS_POLL_SECONDS = 0.5;

export type PeerName = "durable" | "graphile-worker" | "pg-boss";
export const PEERS: readonly PeerName[] = ["durable", "graphile-worker", "pg-boss"];

const RECEIPTS = "create table bench_receipts (job text not null, step int not null, primary key (job, step))";
const INSERT_RECEIPT = "insert into bench_receipts (job, step) values ($1, $2) on conflict do nothing";

/** Called by every contender's job body as its third receipt is written (the drain's counter). */
let onThirdReceipt: () => void = () => {};

export const peerRun = defineWorkflow({
  name: "bench-peer",
  input: z.object({ n: z.number() }),
  async run(ctx) {
    await ctx.step.run("one", () => 1);
    await ctx.step.run("two", () => 2);
    return ctx.step.run("three", () => {
      onThirdReceipt();
      return 3;
    });
  },
});

/** One system under test, on its own fresh database. */
interface Contender {
  /** Enqueues `count` jobs (untimed). */
  enqueue(count: number): Promise<void>;
  /** Starts `loops` concurrent loops taking jobs; they run until `stop`. `onQuery` sees our statements. */
  start(loops: number, onQuery?: (sql: string) => void): Promise<void>;
  /** Enqueues one job now (the latency sample's start). */
  enqueueOne(n: number): Promise<void>;
  /** Jobs not yet completed in the database. */
  remaining(): Promise<number>;
  /** Receipts written (3 per job), to verify the drain. */
  receipts(): Promise<number>;
  stop(): Promise<void>;
}

const quiet = { secrets: { durable: "bench" }, log: () => {} } as const;

/** The `n` a `select count(*)::int as n …` answers. */
async function countOf(client: pg.Client, countSql: string): Promise<number> {
  const { rows } = await client.query(countSql);
  return rows[0].n;
}

async function durableContender(url: string): Promise<Contender> {
  let durable: Durable | null = null;
  const admin = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 4 }),
    workflows: [peerRun],
    ...quiet,
  });
  await admin.migrate();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', new.id); return null; end $$;
     create trigger bench_done after update of status on durable_runs
       for each row when (new.status = 'completed') execute function bench_done();`,
  );
  let stopWork: AbortController | null = null;
  let working: Promise<unknown> | null = null;
  return {
    async enqueue(count) {
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < count) {
            const i = next++;
            await admin.start(peerRun, { n: i }, { id: `job-${i}` });
          }
        }),
      );
      await client.query("analyze");
    },
    async start(loops, onQuery) {
      durable = createDurable({
        db: await connect(url, { driver: "pg", poolSize: loops + 2, onQuery }),
        workflows: [peerRun],
        ...quiet,
      });
      stopWork = new AbortController();
      working = durable.work({ concurrency: loops, signal: stopWork.signal });
    },
    async enqueueOne(n) {
      await admin.start(peerRun, { n }, { id: `one-${n}` });
    },
    remaining: () => countOf(client, "select count(*)::int as n from durable_runs where status <> 'completed'"),
    receipts: () => countOf(client, "select count(*)::int as n from durable_steps where status = 'completed'"),
    async stop() {
      stopWork?.abort();
      await working;
      await durable?.close();
      await admin.close();
      await client.end();
    },
  };
}

const silent = new Logger(() => () => {});

async function graphileContender(url: string): Promise<Contender> {
  await runMigrations({ connectionString: url, logger: silent });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(RECEIPTS);
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', old.id::text); return null; end $$;
     create trigger bench_done after delete on graphile_worker._private_jobs
       for each row execute function bench_done();`,
  );
  const utils = await makeWorkerUtils({ connectionString: url, logger: silent });
  let runner: Runner | null = null;
  let pool: pg.Pool | null = null;
  return {
    async enqueue(count) {
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < count) {
            const i = next++;
            await utils.addJob("bench", { n: i });
          }
        }),
      );
      await client.query("analyze");
    },
    async start(loops) {
      pool = new pg.Pool({ connectionString: url, max: loops + 2 });
      const report = (error: Error) => console.error(`  graphile-worker: ${error.message}`);
      pool.on("error", report);
      pool.on("connect", (client) => client.on("error", report));
      runner = await runGraphile({
        pgPool: pool,
        concurrency: loops,
        noHandleSignals: true,
        logger: silent,
        taskList: {
          bench: async (_payload, helpers) => {
            const job = String(helpers.job.id);
            await helpers.query(INSERT_RECEIPT, [job, 1]);
            await helpers.query(INSERT_RECEIPT, [job, 2]);
            await helpers.query(INSERT_RECEIPT, [job, 3]);
            onThirdReceipt();
          },
        },
      });
    },
    async enqueueOne(n) {
      await utils.addJob("bench", { n });
    },
    remaining: () => countOf(client, "select count(*)::int as n from graphile_worker._private_jobs"),
    receipts: () => countOf(client, "select count(*)::int as n from bench_receipts"),
    async stop() {
      await runner?.stop();
      await pool?.end();
      await utils.release();
      await client.end();
    },
  };
}

async function pgBossContender(url: string): Promise<Contender> {
  const boss = new PgBoss({ connectionString: url, max: 4, schedule: false });
  boss.on("error", (error) => console.error(`  pg-boss: ${error.message}`));
  await boss.start();
  await boss.createQueue("bench");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(RECEIPTS);
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', new.id::text); return null; end $$;
     create trigger bench_done after update of state on pgboss.job
       for each row when (new.state = 'completed') execute function bench_done();`,
  );
  let worker: PgBoss | null = null;
  let pool: pg.Pool | null = null;
  return {
    async enqueue(count) {
      for (let i = 0; i < count; i += 500) {
        await boss.insert(
          Array.from({ length: Math.min(500, count - i) }, (_, k) => ({ name: "bench", data: { n: i + k } })),
        );
      }
      await client.query("analyze");
    },
    async start(loops) {
      worker = new PgBoss({ connectionString: url, max: loops + 2, schedule: false, supervise: false, migrate: false });
      worker.on("error", (error) => console.error(`  pg-boss: ${error.message}`));
      await worker.start();
      // One `work` per loop, one job per fetch. pg-boss waits out its polling interval after a
      // fetch even when it found a job; the handler asks for the next fetch at once instead
      // (notifyWorker, its public API), so a drain is not held to one job per interval.
      pool = new pg.Pool({ connectionString: url, max: loops + 2 });
      const receipts = pool;
      for (let i = 0; i < loops; i++) {
        let id = "";
        id = await worker.work<{ n: number }>(
          "bench",
          { batchSize: 1, pollingIntervalSeconds: PG_BOSS_POLL_SECONDS },
          async ([job]) => {
            await receipts.query(INSERT_RECEIPT, [job!.id, 1]);
            await receipts.query(INSERT_RECEIPT, [job!.id, 2]);
            await receipts.query(INSERT_RECEIPT, [job!.id, 3]);
            onThirdReceipt();
            worker!.notifyWorker(id);
          },
        );
      }
    },
    async enqueueOne(n) {
      await boss.send("bench", { n });
    },
    remaining: () => countOf(client, "select count(*)::int as n from pgboss.job where state <> 'completed'"),
    receipts: () => countOf(client, "select count(*)::int as n from bench_receipts"),
    async stop() {
      await worker?.stop({ graceful: true, wait: true });
      await pool?.end();
      await boss.stop({ graceful: true, wait: true });
      await client.end();
    },
  };
}

const contenders: Record<PeerName, (url: string) => Promise<Contender>> = {
  durable: durableContender,
  "graphile-worker": graphileContender,
  "pg-boss": pgBossContender,
};

const suffix = (peer: PeerName) => `peers_${peer.replace(/\W/g, "_")}`;

/**
 * Drains `jobs` enqueued jobs with `loops` loops; answers runs per second. `timer`: times our
 * statements (one loop: each from its send to the next send).
 */
async function drain(
  peer: PeerName,
  jobs: number,
  loops: number,
  timer?: ReturnType<typeof statementTimer>,
): Promise<number> {
  const contender = await contenders[peer](await freshServerDatabase(suffix(peer)));
  try {
    await contender.enqueue(jobs);
    let bodies = 0;
    const allBodies = new Promise<void>((resolve) => {
      onThirdReceipt = () => {
        if (++bodies === jobs) resolve();
      };
    });
    timer?.reset();
    const t0 = performance.now();
    await contender.start(loops, timer?.onQuery);
    await allBodies;
    // Every job's last receipt is in; the drain ends when the last completion has committed.
    while ((await contender.remaining()) > 0) await new Promise((r) => setTimeout(r, 2));
    const seconds = (performance.now() - t0) / 1000;
    timer?.end();
    const receipts = await contender.receipts();
    if (receipts !== jobs * 3 || bodies !== jobs) {
      throw new Error(`${peer}: ${receipts} receipts and ${bodies} job bodies for ${jobs} jobs (want ${jobs * 3})`);
    }
    return jobs / seconds;
  } finally {
    onThirdReceipt = () => {};
    await contender.stop();
  }
}

/** Enqueue to completion of one job at a time on an idle system, `samples` times (ms each). */
async function latency(peer: PeerName, samples: number, offset: number): Promise<number[]> {
  const url = await freshServerDatabase(suffix(peer));
  const contender = await contenders[peer](url);
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  await listener.query("listen bench_done");
  let done: (() => void) | null = null;
  listener.on("notification", () => done?.());
  try {
    await contender.start(1);
    await new Promise((r) => setTimeout(r, 200)); // the worker reaches its idle wait
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const completed = new Promise<void>((resolve) => {
        done = resolve;
      });
      const t0 = performance.now();
      await contender.enqueueOne(offset + i);
      await completed;
      times.push(performance.now() - t0);
      // A pause between samples, so each one starts from an idle worker at a random poll phase.
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
    }
    return times;
  } finally {
    done = null;
    await listener.end();
    await contender.stop();
  }
}

export interface PeerFigures {
  /** Runs (jobs) per second per peer and loop count, one figure per repetition. */
  drains: Record<PeerName, Record<number, number[]>>;
  /** Enqueue-to-completion samples (ms) per peer, all repetitions. */
  latency: Record<PeerName, number[]>;
  /** Our start, then advance(id) in process, same database kind (ms). */
  advanceLatency: number[];
  /** Our statements in the last 1-loop drain: per kind, how many and the ms from each send to the next. */
  statements: StatementTimes;
}

/**
 * The peers section: `repetitions` rounds, each draining with 1 and then 10 loops for every peer
 * (the order of the peers rotates each round), then the latency samples of each peer.
 */
export async function peers(
  repetitions = PEER_REPETITIONS,
  jobs = PEER_JOBS,
  progress: (line: string) => void = () => {},
): Promise<PeerFigures> {
  const perLoops = () => Object.fromEntries(PEER_LOOPS.map((loops) => [loops, [] as number[]]));
  const drains = { durable: perLoops(), "graphile-worker": perLoops(), "pg-boss": perLoops() };
  const latencies: PeerFigures["latency"] = { durable: [], "graphile-worker": [], "pg-boss": [] };
  const advanceLatency: number[] = [];
  const timer = statementTimer();
  // untimed: JIT-compiles each peer's code and our engine before the first measured drain
  for (const peer of PEERS) await drain(peer, 300, 2);
  for (let round = 0; round < repetitions; round++) {
    const order = PEERS.map((_, i) => PEERS[(i + round) % PEERS.length]!);
    for (const loops of PEER_LOOPS) {
      for (const peer of order) {
        const rate = await drain(peer, jobs, loops, peer === "durable" && loops === 1 ? timer : undefined);
        drains[peer][loops]!.push(rate);
        progress(`round ${round + 1}, ${loops} loop(s), ${peer}: ${Math.round(rate)} runs/s`);
      }
    }
    for (const peer of order) {
      latencies[peer].push(...(await latency(peer, PEER_LATENCY_SAMPLES, round * 1000)));
    }
    advanceLatency.push(...(await advanceAfterStart(PEER_LATENCY_SAMPLES, round * 1000)));
  }
  return { drains, latency: latencies, advanceLatency, statements: timer.times };
}

/** Our in-process path: start, then advance(id) at once, timed until the completion committed. */
async function advanceAfterStart(samples: number, offset: number): Promise<number[]> {
  const durable = createDurable({
    db: await connect(await freshServerDatabase("peers_advance"), { driver: "pg", poolSize: 2 }),
    workflows: [peerRun],
    ...quiet,
  });
  try {
    await durable.migrate();
    const times: number[] = [];
    for (let i = -5; i < samples; i++) {
      const t0 = performance.now();
      const { id } = await durable.start(peerRun, { n: offset + i }, { id: `adv-${offset + i}` });
      const outcome = await durable.advance(id);
      if (outcome !== "completed") throw new Error(`run ${id}: advance returned ${outcome}`);
      if (i >= 0) times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await durable.close();
  }
}

export const median = (values: number[]) => percentile(values, 50);

const LABELS: Record<PeerName, string> = {
  durable: "durable-next (worker mode)",
  "graphile-worker": "graphile-worker 0.17.3",
  "pg-boss": "pg-boss 10.4.2",
};

/** Section 8: runs it, then prints the drains, the ratios, the latencies and the cold start. */
export async function peersSection(heading: (text: string) => void, table: (rows: string[][]) => void): Promise<void> {
  const f = await peers(PEER_REPETITIONS, PEER_JOBS, (line) => console.error(`  peers: ${line}`));
  heading(
    `8. Peers: ${PEER_JOBS.toLocaleString("en-US")} jobs of 3 receipt inserts (each its own transaction) enqueued, ` +
      `then drained by 1 and by ${PEER_LOOPS[1]} loops;\n   ${PEER_REPETITIONS} rounds, each draining every ` +
      "system in turn (the order rotates), each drain on a fresh database",
  );
  const rate = (v: number) => `${Math.round(v)}/s`;
  const rows: string[][] = [
    ["loops", "system", ...f.drains.durable[1]!.map((_, i) => `round ${i + 1}`), "median", "ours ÷ this, per round"],
  ];
  const verdicts: string[] = [];
  for (const loops of PEER_LOOPS) {
    const ours = f.drains.durable[loops]!;
    for (const peer of PEERS) {
      const rates = f.drains[peer][loops]!;
      const ratios = rates.map((r, i) => ours[i]! / r);
      rows.push([
        String(loops),
        LABELS[peer],
        ...rates.map(rate),
        rate(median(rates)),
        peer === "durable" ? "" : ratios.map((r) => ratio(r)).join(" "),
      ]);
      if (peer !== "durable") {
        const worst = Math.min(...ratios);
        verdicts.push(`${loops} loop(s) vs ${peer}: ${worst >= 1 ? "at or above" : "BELOW"} (lowest ${ratio(worst)})`);
      }
    }
  }
  table(rows);
  console.log(
    `
  A job: for the peers, a handler inserting 3 rows into bench_receipts (primary key (job, step), on conflict do
  nothing), each its own statement and commit; for us, a run of 3 \`run\` steps, whose receipts the engine writes.
  Loops: durable.work({ concurrency }); graphile-worker's run({ concurrency }); pg-boss: one work() per loop
  (batchSize 1), whose handler calls notifyWorker so the loop fetches again at once instead of waiting out its
  ${PG_BOSS_POLL_SECONDS} s polling interval. Each system has a pool of loops + 2 connections. The drain is timed from
  the workers' start until every job's last receipt is in and every completion has committed; receipts are counted
  after.
  Target: ours at or above both peers at 1 and at ${PEER_LOOPS[1]} loops, in every round:
    ${verdicts.join("\n    ")}`,
  );

  heading(
    "   Where our time goes with 1 loop (last round): each statement from its send to the next send, so it includes\n" +
      "   the round trip, the server's work and commit, and the JavaScript after each result",
  );
  let total = 0;
  const statementRows = [...f.statements]
    .filter(([, { count }]) => count >= PEER_JOBS / 2) // what runs send (not the worker's idle reads)
    .map(([kind, { count, ms: spent }]) => {
      total += spent / PEER_JOBS;
      return [kind, (count / PEER_JOBS).toFixed(2), ms(spent / count), ms(spent / PEER_JOBS)];
    });
  table([["statement", "per run", "each", "per run"], ...statementRows, ["total", "", "", ms(total)]]);

  heading(
    `   Enqueue to completion of one job, idle system (one loop; completion seen through LISTEN on a trigger that ` +
      `fires as the\n   completion commits); ${PEER_LATENCY_SAMPLES} samples per round, ${PEER_REPETITIONS} rounds`,
  );
  const lat = (label: string, samples: number[]) => [
    label,
    ms(percentile(samples, 50)),
    ms(percentile(samples, 99)),
    ms(samples.reduce((a, b) => a + b, 0) / samples.length),
  ];
  table([
    ["system", "p50", "p99", "mean"],
    lat(`${LABELS.durable}: start, the worker wakes on NOTIFY`, f.latency.durable),
    lat("durable-next: start, then advance(id) in process", f.advanceLatency),
    lat(`${LABELS["graphile-worker"]}: addJob, the worker wakes on NOTIFY`, f.latency["graphile-worker"]),
    lat(`${LABELS["pg-boss"]}: send, the worker polls every ${PG_BOSS_POLL_SECONDS} s`, f.latency["pg-boss"]),
  ]);
  const graphileP50 = percentile(f.latency["graphile-worker"], 50);
  const best = Math.min(percentile(f.latency.durable, 50), percentile(f.advanceLatency, 50));
  console.log(
    `\n  Target: our p50 (worker mode or advance after start) at or below graphile-worker's: ${ms(best)} vs ` +
      `${ms(graphileP50)}, ${best <= graphileP50 ? "met" : "NOT MET"}.`,
  );

  heading(
    `   Cold start: import, connect, one run and exit of the bundled code, spawn to exit; ${COLD_START_SAMPLES} ` +
      "samples each, interleaved (scripts/bench/cold-start.ts)",
  );
  printColdStart(await coldStart(COLD_START_SAMPLES));
}
