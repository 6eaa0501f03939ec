// Scale-out (docs/guide/scaling-out.md, "Fan-out"): a backlog of due runs, each one step that calls a
// mock provider answering after 200 ms, drained through the tick route of `next start` of a user's
// app (a minimal app + add-to-app, built once) the way Vercel Cron drives it, one caller calling
// again as soon as a call returns: serially, with tickConcurrency 8, with fan-out, and by a worker
// process (`durable.work`, run with tsx in the app). Also: the most runs of one concurrency key
// seen executing at once in the database, and a worker's start-to-completion latency.
//
// The bench process enqueues (createDurable + start over the same DATABASE_URL, with definitions
// of the same names, inputs and keys; it never executes a run), serves the mock provider, drives
// the tick route and samples durable_runs. Every database is `benchscale_*`, dropped at the end.
//
// Its parts (scale-out/): settings, app-under-test, mock-provider, databases, processes, drain.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { buildApp } from "../../tests/e2e/helpers/next-server";
import { percentile } from "./report";
import { type Env, type WorkerProcess, makeSecrets, startApp, startWorker } from "./scale-out/processes";
import { type Features, featuresOf, keyedCall, makeApp, providerCall, threeSteps } from "./scale-out/app-under-test";
import {
  KEYED_RUNS,
  LATENCY_SAMPLES,
  LATENCY_WARMUP,
  MAX_FAN_OUT,
  TENANTS,
  TICK_CONCURRENCY,
  WORKER_CONCURRENCY,
} from "./scale-out/settings";
import { MockProvider } from "./scale-out/mock-provider";
import { benchInstance, dropDatabases, enqueue, freshDatabase, pad } from "./scale-out/databases";
import { drain, tickDriver, waitForEnd } from "./scale-out/drain";

// ── The measurements ────────────────────────────────────────────────────────────────────────

export type ModeKey = "serial" | "tick8" | "fanout" | "worker";

export interface ModeResult {
  key: ModeKey;
  label: string;
  /** Why it was not measured (a part of lib/durable it needs is missing). */
  skipped?: string;
  seconds: number;
  runsPerSecond: number;
  providerRequests: number;
  /** Runs whose provider call was made more than once. */
  duplicates: number;
  /** Most provider calls in flight at once. */
  maxInFlight: number;
  maxExecuting: number;
  samples: number;
  tickCalls: number;
  claimed: number;
  fannedOut: number;
  /** Worker mode: its WorkReport, and how long it took to stop after SIGTERM. */
  workReport?: Record<string, unknown> | null;
  stopMs?: number;
}

export interface KeyedResult {
  via: string;
  skipped?: string;
  seconds: number;
  /** Per key, the most runs seen executing at once in durable_runs. */
  perKey: Record<string, number>;
  /** Per key, the most provider calls in flight at once. */
  providerPerKey: Record<string, number>;
  providerRequests: number;
  samples: number;
}

export interface WorkerLatency {
  skipped?: string;
  samples: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export interface ScaleOut {
  runs: number;
  buildMs: number;
  features: Features;
  modes: ModeResult[];
  keyed: KeyedResult[];
  latency: WorkerLatency;
}

const MODES: { key: ModeKey; label: string; tickConcurrency: number; maxFanOut: number }[] = [
  { key: "serial", label: "serial (tickConcurrency 1, no fan-out)", tickConcurrency: 1, maxFanOut: 0 },
  {
    key: "tick8",
    label: `tickConcurrency ${TICK_CONCURRENCY}, no fan-out`,
    tickConcurrency: TICK_CONCURRENCY,
    maxFanOut: 0,
  },
  {
    key: "fanout",
    label: `fan-out: tickConcurrency ${TICK_CONCURRENCY}, maxFanOut ${MAX_FAN_OUT} (<= ${MAX_FAN_OUT + 1} invocations)`,
    tickConcurrency: TICK_CONCURRENCY,
    maxFanOut: MAX_FAN_OUT,
  },
];

const began = performance.now();
const say = (message: string) =>
  process.stderr.write(`  [scale-out ${((performance.now() - began) / 1000).toFixed(0)} s] ${message}\n`);

function missing(features: Features, need: (keyof Features)[]): string | undefined {
  const absent = need.filter((f) => !features[f]);
  if (absent.length === 0) return undefined;
  const names = {
    tickConcurrency: "DURABLE_TICK_CONCURRENCY",
    fanOut: "DURABLE_MAX_FAN_OUT",
    worker: "durable.work()",
  };
  return `lib/durable has no ${absent.map((f) => names[f]).join(", ")}`;
}

function skippedMode(key: ModeKey, label: string, why: string): ModeResult {
  return {
    key,
    label,
    skipped: why,
    seconds: 0,
    runsPerSecond: 0,
    providerRequests: 0,
    duplicates: 0,
    maxInFlight: 0,
    maxExecuting: 0,
    samples: 0,
    tickCalls: 0,
    claimed: 0,
    fannedOut: 0,
  };
}

/** A backlog of `runs` provider-call runs drained through the tick route of `next start`. */
async function tickMode(env: Env, mode: (typeof MODES)[number], runs: number): Promise<ModeResult> {
  const url = await freshDatabase(mode.key);
  const { server, tick } = await startApp(env, url, mode.tickConcurrency, mode.maxFanOut);
  try {
    const durable = await benchInstance(url, env.secrets);
    await enqueue(durable, runs, (i) => durable.start(providerCall, { n: i }, { id: `call-${pad(i)}` }));
    await durable.close();
    env.provider.reset();
    say(`${mode.key}: draining ${runs} runs through ${server.url}/api/durable/tick`);
    const d = await drain(url, providerCall.name, runs, mode.label, tickDriver(tick), () =>
      server.output().slice(-3000),
    );
    say(`${mode.key}: drained in ${d.seconds.toFixed(1)} s (${d.tickCalls} tick calls)`);
    await server.stop();
    return {
      key: mode.key,
      label: mode.label,
      ...d,
      runsPerSecond: runs / d.seconds,
      providerRequests: env.provider.requests,
      duplicates: env.provider.duplicates(),
      maxInFlight: env.provider.maxInFlight,
    };
  } finally {
    await server.stop();
  }
}

/** The same backlog drained by one worker process (`durable.work({ concurrency: 32 })`), no tick at all. */
async function workerMode(env: Env, runs: number): Promise<ModeResult> {
  const label = `worker: durable.work({ concurrency: ${WORKER_CONCURRENCY} }), 1 process`;
  const url = await freshDatabase("worker");
  const durable = await benchInstance(url, env.secrets);
  await enqueue(durable, runs, (i) => durable.start(providerCall, { n: i }, { id: `call-${pad(i)}` }));
  await durable.close();
  const worker = await startWorker(env, url);
  let stopped = false;
  try {
    env.provider.reset();
    say(`worker: draining ${runs} runs`);
    worker.go();
    const d = await drain(url, providerCall.name, runs, label, waitForEnd, () => worker.output().slice(-3000));
    say(`worker: drained in ${d.seconds.toFixed(1)} s`);
    stopped = true;
    const { report, stopMs } = await worker.stop();
    return {
      key: "worker",
      label,
      ...d,
      runsPerSecond: runs / d.seconds,
      providerRequests: env.provider.requests,
      duplicates: env.provider.duplicates(),
      maxInFlight: env.provider.maxInFlight,
      workReport: report,
      stopMs,
    };
  } finally {
    if (!stopped) await worker.stop().catch(() => {});
  }
}

/** KEYED_RUNS keyed-call runs over TENANTS tenants, drained through `via`; the most per key seen executing. */
async function keyedDrain(env: Env, via: "worker" | "fanout"): Promise<KeyedResult> {
  const label =
    via === "worker"
      ? `worker, concurrency ${WORKER_CONCURRENCY}`
      : `tick route, tickConcurrency ${TICK_CONCURRENCY} + maxFanOut ${MAX_FAN_OUT}`;
  const url = await freshDatabase(`keyed_${via}`);
  const app = via === "fanout" ? await startApp(env, url, TICK_CONCURRENCY, MAX_FAN_OUT) : null;
  let worker: WorkerProcess | null = null;
  try {
    const durable = await benchInstance(url, env.secrets);
    await enqueue(durable, KEYED_RUNS, (i) =>
      durable.start(keyedCall, { tenant: `tenant-${i % TENANTS}`, n: i }, { id: `keyed-${pad(i)}` }),
    );
    await durable.close();
    if (via === "worker") worker = await startWorker(env, url);
    env.provider.reset();
    say(`keyed: draining ${KEYED_RUNS} runs through the ${via}`);
    worker?.go();
    const d = await drain(
      url,
      keyedCall.name,
      KEYED_RUNS,
      `keyed drain (${label})`,
      app ? tickDriver(app.tick) : waitForEnd,
      () => (app ? app.server.output() : worker!.output()).slice(-3000),
    );
    if (worker) {
      const w = worker;
      worker = null;
      await w.stop();
    }
    await app?.server.stop();
    const tenants = Array.from({ length: TENANTS }, (_, i) => `tenant-${i}`);
    return {
      via: label,
      seconds: d.seconds,
      perKey: Object.fromEntries(tenants.map((t) => [t, d.perKey.get(t) ?? 0])),
      providerPerKey: Object.fromEntries(tenants.map((t) => [t, env.provider.tenants.get(t)?.max ?? 0])),
      providerRequests: env.provider.requests,
      samples: d.samples,
    };
  } finally {
    await worker?.stop().catch(() => {});
    await app?.server.stop();
  }
}

/**
 * Start to completion of one three-steps run with an idle worker running: start from this process,
 * completion seen through LISTEN (a trigger of the bench's own on durable_runs notifies when a run
 * turns terminal, after its commit), one run at a time.
 */
async function workerLatency(env: Env): Promise<WorkerLatency> {
  const url = await freshDatabase("latency");
  const durable = await benchInstance(url, env.secrets);
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  await listener.query(`
    create function bench_notify_done() returns trigger language plpgsql as $$
    begin
      perform pg_notify('bench_done', json_build_object('id', new.id, 'status', new.status)::text);
      return null;
    end $$;
    create trigger bench_done after update of status on durable_runs for each row
      when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
      execute function bench_notify_done();`);
  const waiting = new Map<string, (status: string) => void>();
  listener.on("notification", (message) => {
    const { id, status } = JSON.parse(message.payload ?? "{}") as { id: string; status: string };
    waiting.get(id)?.(status);
  });
  await listener.query("listen bench_done");
  const worker = await startWorker(env, url);
  try {
    worker.go();
    await sleep(500); // it opens its LISTEN connection and finds nothing due
    const times: number[] = [];
    say(`latency: ${LATENCY_SAMPLES} runs, one at a time`);
    for (let i = 0; i < LATENCY_WARMUP + LATENCY_SAMPLES; i++) {
      const id = `three-${pad(i)}`;
      let timer: NodeJS.Timeout | undefined;
      const done = new Promise<string>((resolve, reject) => {
        waiting.set(id, resolve);
        timer = setTimeout(
          () => reject(new Error(`run ${id} did not finish within 10 s:\n${worker.output().slice(-3000)}`)),
          10_000,
        );
      });
      const t0 = performance.now();
      await durable.start(threeSteps, { n: i }, { id });
      const status = await done.finally(() => clearTimeout(timer));
      const elapsed = performance.now() - t0;
      waiting.delete(id);
      if (status !== "completed") throw new Error(`run ${id} ended ${status}`);
      if (i >= LATENCY_WARMUP) times.push(elapsed);
      await sleep(10); // the worker is idle again before the next start
    }
    return {
      samples: times.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      mean: times.reduce((a, b) => a + b, 0) / times.length,
      max: Math.max(...times),
    };
  } finally {
    await worker.stop().catch((error) => say(`latency worker: ${(error as Error).message}`));
    await listener.end();
    await durable.close();
  }
}

/**
 * The whole section: builds the app once, then each mode on its own fresh database and server.
 * Throws (after cleaning up) when a mode does not drain or a run fails.
 */
export async function scaleOut(runs: number): Promise<ScaleOut> {
  const provider = await MockProvider.start();
  const app = mkdtempSync(path.join(os.tmpdir(), "durable-bench-scale-"));
  try {
    say(`building a fresh app with add-to-app in ${app}`);
    makeApp(app);
    const build = await buildApp(app);
    const features = featuresOf(app);
    say(`built in ${(build.ms / 1000).toFixed(0)} s; lib/durable offers ${JSON.stringify(features)}`);
    const env: Env = { app, secrets: makeSecrets(), provider };
    const modes: ModeResult[] = [];
    for (const mode of MODES) {
      const need: (keyof Features)[] =
        mode.key === "serial" ? [] : mode.key === "tick8" ? ["tickConcurrency"] : ["tickConcurrency", "fanOut"];
      const why = missing(features, need);
      modes.push(why ? skippedMode(mode.key, mode.label, why) : await tickMode(env, mode, runs));
    }
    const noWorker = missing(features, ["worker"]);
    modes.push(
      noWorker
        ? skippedMode("worker", `worker: durable.work({ concurrency: ${WORKER_CONCURRENCY} })`, noWorker)
        : await workerMode(env, runs),
    );
    const keyed: KeyedResult[] = [];
    for (const via of ["worker", "fanout"] as const) {
      const why = missing(features, via === "worker" ? ["worker"] : ["tickConcurrency", "fanOut"]);
      keyed.push(
        why
          ? { via, skipped: why, seconds: 0, perKey: {}, providerPerKey: {}, providerRequests: 0, samples: 0 }
          : await keyedDrain(env, via),
      );
    }
    const latency: WorkerLatency = noWorker
      ? { skipped: noWorker, samples: 0, p50: 0, p99: 0, mean: 0, max: 0 }
      : await workerLatency(env);
    return { runs, buildMs: build.ms, features, modes, keyed, latency };
  } finally {
    await provider.close();
    await dropDatabases();
    rmSync(app, { recursive: true, force: true });
  }
}
