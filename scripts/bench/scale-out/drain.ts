// Draining a backlog: a driver calls the tick route (or waits on the worker) while durable_runs is sampled.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { PROVIDER_MS, SAMPLE_MS } from "./settings";
import type { TickReport } from "./processes";
import { keyedCall } from "./app-under-test";

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
export async function drain(
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
export function tickDriver(tick: (signal?: AbortSignal) => Promise<TickReport>) {
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
export const waitForEnd = ({ halt }: DriveSignals): Promise<Driven> =>
  new Promise((resolve) =>
    halt.addEventListener("abort", () => resolve({ tickCalls: 0, claimed: 0, fannedOut: 0 }), { once: true }),
  );
