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
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "../../lib/durable";
import { addToApp, writeMinimalApp } from "../../tests/e2e/helpers/fresh-app";
import { buildApp, type NextServer, startNext } from "../../tests/e2e/helpers/next-server";
import { SERVER_URL } from "./databases";
import { percentile } from "./report";

export const PROVIDER_MS = 200;
export const KEY_LIMIT = 2;
export const TENANTS = 4;
export const KEYED_RUNS = 200;
export const WORKER_CONCURRENCY = 32;
export const TICK_CONCURRENCY = 8;
export const MAX_FAN_OUT = 4;
export const LATENCY_SAMPLES = 100;
const LATENCY_WARMUP = 10;
/** How often durable_runs is sampled while a backlog drains (ms). */
export const SAMPLE_MS = 20;
const STARTERS = 8;

// ── The app under test ──────────────────────────────────────────────────────────────────────

/** app/workflows/bench.ts of the app under test. */
const APP_WORKFLOWS = `import { z } from "zod";
import { defineWorkflow } from "../../lib/durable";

/** A provider call: the mock provider of the bench (BENCH_PROVIDER_URL) answers after ${PROVIDER_MS} ms. */
async function callProvider(query: string, idempotencyKey: string): Promise<{ ok: boolean }> {
  const base = process.env.BENCH_PROVIDER_URL;
  if (!base) throw new Error("BENCH_PROVIDER_URL is not set");
  const response = await fetch(\`\${base}/call?\${query}\`, {
    method: "POST",
    headers: { "idempotency-key": idempotencyKey },
  });
  if (!response.ok) throw new Error(\`the provider answered \${response.status}\`);
  return (await response.json()) as { ok: boolean };
}

export const providerCall = defineWorkflow({
  name: "provider-call",
  input: z.object({ n: z.number().int() }),
  async run(ctx) {
    return ctx.step.run("call", (s) => callProvider(\`run=\${encodeURIComponent(ctx.runId)}\`, s.externalKey));
  },
});

export const keyedCall = defineWorkflow({
  name: "keyed-call",
  input: z.object({ tenant: z.string(), n: z.number().int() }),
  concurrency: { key: (input) => input.tenant, limit: ${KEY_LIMIT} },
  async run(ctx, input) {
    const query = \`run=\${encodeURIComponent(ctx.runId)}&tenant=\${encodeURIComponent(input.tenant)}\`;
    return ctx.step.run("call", (s) => callProvider(query, s.externalKey));
  },
});

export const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ n: z.number().int() }),
  async run(ctx, input) {
    const a = await ctx.step.run("one", () => input.n + 1);
    const b = await ctx.step.run("two", () => a + 1);
    return ctx.step.run("three", () => b + 1);
  },
});
`;

/**
 * scripts/bench-worker.ts of the app under test: prints `ready` once the instance is open, waits
 * for a line on stdin, then works until SIGTERM and prints `report <WorkReport>`. `work` is
 * reached through a cast so the app builds whether or not this version of lib/durable has it.
 */
const APP_WORKER = `import { getDurable } from "../app/durable";

type Work = (options: { concurrency?: number; signal?: AbortSignal }) => Promise<unknown>;

async function main() {
  const controller = new AbortController();
  process.once("SIGTERM", () => controller.abort());
  const durable = await getDurable();
  const work = (durable as unknown as { work?: Work }).work;
  if (typeof work !== "function") {
    console.log("no-work");
    process.exit(3);
  }
  console.log("ready");
  await new Promise<void>((resolve) => {
    process.stdin.once("data", () => resolve());
    process.stdin.once("end", () => resolve());
    controller.signal.addEventListener("abort", () => resolve());
  });
  const report = await work.call(durable, {
    concurrency: Number(process.env.BENCH_WORKER_CONCURRENCY),
    signal: controller.signal,
  });
  console.log(\`report \${JSON.stringify(report)}\`);
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/** What the bench starts: the same names, inputs and keys as the app's; the bodies never run here. */
const elsewhere = async (): Promise<never> => {
  throw new Error("the bench only starts runs: the app under test executes them");
};
const providerCall = defineWorkflow({
  name: "provider-call",
  input: z.object({ n: z.number().int() }),
  run: elsewhere,
});
const keyedCall = defineWorkflow({
  name: "keyed-call",
  input: z.object({ tenant: z.string(), n: z.number().int() }),
  concurrency: { key: (input) => input.tenant, limit: KEY_LIMIT },
  run: elsewhere,
});
const threeSteps = defineWorkflow({ name: "three-steps", input: z.object({ n: z.number().int() }), run: elsewhere });

/** A minimal app, add-to-app on it, the bench's workflows registered in its app/durable.ts. */
function makeApp(dir: string): void {
  writeMinimalApp(dir);
  const added = addToApp(dir);
  if (added.status !== 0) throw new Error(`add-to-app failed:\n${added.output}`);
  mkdirSync(path.join(dir, "app/workflows"), { recursive: true });
  writeFileSync(path.join(dir, "app/workflows/bench.ts"), APP_WORKFLOWS);
  mkdirSync(path.join(dir, "scripts"), { recursive: true });
  writeFileSync(path.join(dir, "scripts/bench-worker.ts"), APP_WORKER);
  const file = path.join(dir, "app/durable.ts");
  const instance = readFileSync(file, "utf8");
  const marker = "// register your workflows here";
  if (!instance.includes(marker)) throw new Error(`app/durable.ts written by add-to-app has no "${marker}"`);
  writeFileSync(
    file,
    `import { keyedCall, providerCall, threeSteps } from "./workflows/bench";\n` +
      instance.replace(marker, "providerCall, keyedCall, threeSteps,"),
  );
}

export interface Features {
  /** createAppDurable reads DURABLE_TICK_CONCURRENCY. */
  tickConcurrency: boolean;
  /** createDurableRoutes reads DURABLE_MAX_FAN_OUT. */
  fanOut: boolean;
  /** The instance has `work()`. */
  worker: boolean;
}

/** What the copied lib/durable offers, from its source (a missing mode is reported, not faked). */
function featuresOf(dir: string): Features {
  const lib = path.join(dir, "lib/durable");
  let text = "";
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const child = path.join(at, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith(".ts")) text += readFileSync(child, "utf8");
    }
  };
  walk(lib);
  const instance = readFileSync(path.join(lib, "engine/create-durable.ts"), "utf8");
  return {
    tickConcurrency: text.includes("DURABLE_TICK_CONCURRENCY"),
    fanOut: text.includes("DURABLE_MAX_FAN_OUT"),
    // A method (`work(options) {`) in older releases, a property (`work: (options) =>`) since.
    worker: /^\s+(async\s+)?work\s*[(<:]/m.test(instance),
  };
}

// ── The mock provider ───────────────────────────────────────────────────────────────────────

/** A plain node:http server that answers every request after PROVIDER_MS, counting them. */
class MockProvider {
  requests = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly perRun = new Map<string, number>();
  readonly tenants = new Map<string, { now: number; max: number }>();
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<MockProvider> {
    let provider: MockProvider | undefined;
    const server = http.createServer((request, response) => provider!.answer(request, response));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => server.listen(0, "127.0.0.1", resolve).once("error", reject));
    provider = new MockProvider(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return provider;
  }

  private answer(request: http.IncomingMessage, response: http.ServerResponse) {
    request.resume();
    const query = new URL(request.url ?? "/", "http://provider").searchParams;
    const run = query.get("run") ?? "";
    const tenant = query.get("tenant");
    this.requests++;
    this.perRun.set(run, (this.perRun.get(run) ?? 0) + 1);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const key = tenant === null ? null : (this.tenants.get(tenant) ?? { now: 0, max: 0 });
    if (key && tenant !== null) {
      key.now++;
      key.max = Math.max(key.max, key.now);
      this.tenants.set(tenant, key);
    }
    setTimeout(() => {
      this.inFlight--;
      if (key) key.now--;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true }));
    }, PROVIDER_MS);
  }

  reset() {
    this.requests = 0;
    this.maxInFlight = this.inFlight;
    this.perRun.clear();
    this.tenants.clear();
  }

  /** Runs whose provider was called more than once. */
  duplicates(): number {
    return [...this.perRun.values()].filter((n) => n > 1).length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ── Databases ───────────────────────────────────────────────────────────────────────────────

const created = new Set<string>();

async function withAdmin(work: (admin: pg.Client) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.end();
  }
}

/** Drops and creates `benchscale_<name>` on the server; returns its URL. */
async function freshDatabase(name: string): Promise<string> {
  const full = `benchscale_${name}`;
  created.add(full);
  await withAdmin(async (admin) => {
    await admin.query(`drop database if exists "${full}" with (force)`);
    await admin.query(`create database "${full}"`);
  });
  const url = new URL(SERVER_URL);
  url.pathname = `/${full}`;
  return url.toString();
}

async function dropDatabases(): Promise<void> {
  await withAdmin(async (admin) => {
    for (const name of created) await admin.query(`drop database if exists "${name}" with (force)`);
  });
  created.clear();
}

/** The bench's own instance on `url`: migrates (a no-op once the app has) and starts runs. */
async function benchInstance(url: string, secrets: Secrets): Promise<Durable> {
  const durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: STARTERS }),
    workflows: [providerCall, keyedCall, threeSteps],
    secrets: { durable: secrets.DURABLE_SECRET, cron: secrets.CRON_SECRET },
    log: () => {},
  });
  await durable.migrate();
  return durable;
}

/** Starts `count` runs, STARTERS at a time, then analyzes durable_runs (untimed). */
async function enqueue(durable: Durable, count: number, start: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: STARTERS }, async () => {
      while (next < count) await start(next++);
    }),
  );
  await sql`analyze durable_runs`.execute(durable.db);
}

const pad = (i: number) => String(i).padStart(6, "0");

// ── Processes ───────────────────────────────────────────────────────────────────────────────

type Secrets = { CRON_SECRET: string; DURABLE_SECRET: string; DURABLE_SIGNAL_SECRET: string };

function makeSecrets(): Secrets {
  return {
    CRON_SECRET: `cron-${randomBytes(12).toString("hex")}`,
    DURABLE_SECRET: `admin-${randomBytes(12).toString("hex")}`,
    DURABLE_SIGNAL_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
  };
}

interface Env {
  app: string;
  secrets: Secrets;
  provider: MockProvider;
}

/** The environment of the app's processes for one database and mode. */
function appEnv(env: Env, url: string, tickConcurrency: number, maxFanOut: number): Record<string, string | undefined> {
  return {
    ...env.secrets,
    DATABASE_URL: url,
    DURABLE_DRIVER: undefined,
    BENCH_PROVIDER_URL: env.provider.url,
    DURABLE_TICK_CONCURRENCY: String(tickConcurrency),
    DURABLE_MAX_FAN_OUT: String(maxFanOut),
    BENCH_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
  };
}

interface WorkerProcess {
  /** Lets it start working (it waits for this after `ready`). */
  go(): void;
  /** SIGTERM (its signal aborts), waits for it to exit; returns its WorkReport and how long it took to stop. */
  stop(): Promise<{ report: Record<string, unknown> | null; stopMs: number }>;
  output(): string;
}

const workers = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of workers) killGroup(child, "SIGKILL");
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: gone already
  }
}

/** `tsx scripts/bench-worker.ts` in the app, in its own process group; resolves once it printed `ready`. */
async function startWorker(env: Env, url: string): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    [path.join(env.app, "node_modules/tsx/dist/cli.mjs"), "scripts/bench-worker.ts"],
    {
      cwd: env.app,
      env: withoutUndefined({ ...process.env, NODE_ENV: "production", ...appEnv(env, url, 1, 0) }),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    },
  );
  workers.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      workers.delete(child);
      resolve(code);
    }),
  );
  const deadline = Date.now() + 60_000;
  while (!/^ready$/m.test(output)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `the worker exited (${child.exitCode ?? child.signalCode}) before ready:\n${output.slice(-4000)}`,
      );
    }
    if (Date.now() > deadline) {
      killGroup(child, "SIGKILL");
      throw new Error(`the worker was not ready within 60 s:\n${output.slice(-4000)}`);
    }
    await sleep(20);
  }
  return {
    go: () => child.stdin!.write("go\n"),
    output: () => output,
    async stop() {
      const t0 = performance.now();
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), 30_000);
      const code = await exited;
      clearTimeout(timer);
      const stopMs = performance.now() - t0;
      killGroup(child, "SIGKILL");
      if (code !== 0) {
        throw new Error(
          `the worker exited with ${code} (${stopMs.toFixed(0)} ms after SIGTERM):\n${output.slice(-4000)}`,
        );
      }
      const line = /^report (.*)$/m.exec(output)?.[1];
      return { report: line ? (JSON.parse(line) as Record<string, unknown>) : null, stopMs };
    },
  };
}

function withoutUndefined(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out as NodeJS.ProcessEnv;
}

/** `next start` of the app for one database and mode, warmed up by one tick on an empty backlog. */
async function startApp(
  env: Env,
  url: string,
  tickConcurrency: number,
  maxFanOut: number,
): Promise<{ server: NextServer; tick: (signal?: AbortSignal) => Promise<TickReport> }> {
  const server = await startNext({ dir: env.app, env: appEnv(env, url, tickConcurrency, maxFanOut) });
  const tick = async (signal?: AbortSignal): Promise<TickReport> => {
    const response = await fetch(`${server.url}/api/durable/tick`, {
      headers: { authorization: `Bearer ${env.secrets.CRON_SECRET}` },
      signal,
    });
    const body = await response.text();
    if (response.status !== 200) {
      throw new Error(`GET /api/durable/tick answered ${response.status}: ${body}\n${server.output().slice(-3000)}`);
    }
    return JSON.parse(body) as TickReport;
  };
  try {
    // The first request opens the pool and migrates the fresh database (the app does it itself).
    const first = await tick();
    if (first.claimed !== 0) throw new Error(`the warm-up tick claimed ${first.claimed} runs of an empty database`);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { server, tick };
}

type TickReport = { claimed: number; fannedOut?: number };

// ── Draining ────────────────────────────────────────────────────────────────────────────────

interface Drained {
  seconds: number;
  /** Most runs seen `running` under a live lease at once (sampled). */
  maxExecuting: number;
  /** Per concurrency key, the most runs seen `running` under a live lease at once (sampled). */
  perKey: Map<string, number>;
  samples: number;
}

interface Driven {
  tickCalls: number;
  claimed: number;
  fannedOut: number;
}

/** Generous: serial needs runs × PROVIDER_MS. */
const drainTimeoutMs = (runs: number) => 60_000 + runs * 2.5 * PROVIDER_MS;

/** What a driver is told: `halt` once drained (make no new call), `cut` after a grace (end the call in flight). */
interface DriveSignals {
  halt: AbortSignal;
  cut: AbortSignal;
}

/** How long a call still in flight when the backlog is drained may take to return with its report. */
const GRACE_MS = 60_000;

/**
 * Times `drive` from now until no run of `workflow` is left non-terminal, sampling durable_runs
 * every SAMPLE_MS. Throws when a run fails, `drive` fails, or the backlog outlasts the timeout.
 */
async function drain(
  url: string,
  workflow: string,
  runs: number,
  what: string,
  drive: (signals: DriveSignals) => Promise<Driven>,
  details: () => string,
): Promise<Drained & Driven> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const halt = new AbortController();
  const cut = new AbortController();
  let failure: unknown;
  let driven: Driven = { tickCalls: 0, claimed: 0, fannedOut: 0 };
  const result: Drained = { seconds: 0, maxExecuting: 0, perKey: new Map(), samples: 0 };
  const timeout = drainTimeoutMs(runs);
  const t0 = performance.now();
  const driving = drive({ halt: halt.signal, cut: cut.signal }).then(
    (d) => {
      driven = d;
    },
    (error) => {
      if (!cut.signal.aborted) failure = error;
    },
  );
  let drained = false;
  try {
    for (;;) {
      if (failure) throw failure;
      const { rows } = await client.query(
        `select count(*) filter (where status in ('pending', 'running', 'waiting'))::int as open,
                count(*) filter (where status = 'completed')::int as completed,
                count(*) filter (where status in ('failed', 'cancelled'))::int as failed,
                count(*) filter (where status = 'running' and lease_until > now())::int as executing
           from durable_runs where workflow = $1`,
        [workflow],
      );
      const counts = rows[0] as { open: number; completed: number; failed: number; executing: number };
      result.samples++;
      result.maxExecuting = Math.max(result.maxExecuting, counts.executing);
      if (workflow === keyedCall.name) {
        const keys = await client.query(
          `select concurrency_key as key, count(*)::int as n from durable_runs
            where status = 'running' and lease_until > now() and concurrency_key is not null group by 1`,
        );
        for (const { key, n } of keys.rows as { key: string; n: number }[]) {
          result.perKey.set(key, Math.max(result.perKey.get(key) ?? 0, n));
        }
      }
      if (counts.failed > 0) {
        const { rows: bad } = await client.query(
          "select id, status, error from durable_runs where status in ('failed', 'cancelled') limit 3",
        );
        throw new Error(`${what}: ${counts.failed} runs failed, e.g. ${JSON.stringify(bad)}\n${details()}`);
      }
      if (counts.open === 0) {
        result.seconds = (performance.now() - t0) / 1000;
        if (counts.completed !== runs) throw new Error(`${what}: ${counts.completed} of ${runs} runs completed`);
        drained = true;
        break;
      }
      if (performance.now() - t0 > timeout) {
        throw new Error(
          `${what} did not drain within ${(timeout / 1000).toFixed(0)} s: ${counts.open} of ${runs} runs ` +
            `not finished, ${counts.completed} completed\n${details()}`,
        );
      }
      await sleep(SAMPLE_MS);
    }
  } finally {
    halt.abort();
    if (drained) await within(driving, GRACE_MS);
    cut.abort();
    await driving;
    await client.end();
  }
  if (failure) throw failure;
  return { ...result, ...driven };
}

/** Waits for `promise`, at most `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * One caller, as Vercel Cron would be if it called again as soon as a call returned. Once the
 * backlog is drained it makes no new call; the call in flight returns with its report.
 */
function tickDriver(tick: (signal?: AbortSignal) => Promise<TickReport>) {
  return async ({ halt, cut }: DriveSignals): Promise<Driven> => {
    const driven: Driven = { tickCalls: 0, claimed: 0, fannedOut: 0 };
    while (!halt.aborted) {
      let report: TickReport;
      driven.tickCalls++;
      try {
        report = await tick(cut);
      } catch (error) {
        if (cut.aborted) break;
        throw error;
      }
      driven.claimed += report.claimed;
      driven.fannedOut += report.fannedOut ?? 0;
    }
    return driven;
  };
}

/** The worker drives itself: nothing to do but wait for the end. */
const waitForEnd = ({ halt }: DriveSignals): Promise<Driven> =>
  new Promise((resolve) =>
    halt.addEventListener("abort", () => resolve({ tickCalls: 0, claimed: 0, fannedOut: 0 }), { once: true }),
  );

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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
