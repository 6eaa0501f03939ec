// The app's processes the scale-out bench starts: next start of the tick route, and the worker.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type NextServer, startNext } from "../../../tests/e2e/helpers/next-server";
import type { MockProvider } from "./mock-provider";
import { WORKER_CONCURRENCY } from "./settings";

export type Secrets = { CRON_SECRET: string; DURABLE_SECRET: string; DURABLE_SIGNAL_SECRET: string };

export function makeSecrets(): Secrets {
  return {
    CRON_SECRET: `cron-${randomBytes(12).toString("hex")}`,
    DURABLE_SECRET: `admin-${randomBytes(12).toString("hex")}`,
    DURABLE_SIGNAL_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
  };
}

export interface Env {
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

export interface WorkerProcess {
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
export async function startWorker(env: Env, url: string): Promise<WorkerProcess> {
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
export async function startApp(
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

export type TickReport = { claimed: number; fannedOut?: number };
