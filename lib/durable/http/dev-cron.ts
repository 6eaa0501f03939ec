// A stand-in for Vercel Cron under `next dev`: it calls the tick route with the cron bearer when
// the next run is due to wake (the tick report says when, `nextWakeInMs`) and at least every few
// seconds, so sleeps, retry delays and timeouts come due on time in development with nothing else
// running. The app's `instrumentation.ts` starts it (docs/decisions.md, "A local cron in the
// server process"). It goes through HTTP rather than calling `tick()` in process so that each
// call runs the workflows as the dev server last compiled them, as Vercel Cron would.
import { resolveSecret } from "../auth/secrets";
import { MAX_TIMER_MS } from "../duration";

export interface DevCronOptions {
  /** The route to call; default "/api/durable/tick". */
  path?: string;
  /**
   * The longest time between calls; default DURABLE_DEV_CRON_MS, else 5000. Calls come sooner
   * when a tick reports a run waking sooner; the interval still finds runs that another process
   * started (the next tick then learns their wake times).
   */
  intervalMs?: number;
  /** The shortest time between calls; default 50. */
  minDelayMs?: number;
  /** The cron bearer; default CRON_SECRET, else the development secret the routes fall back to. */
  secret?: string;
  /** Where reports and problems go (console.log with a prefix). */
  log?: (message: string) => void;
  /** How to call the route; default the global fetch (tests pass their own). */
  fetch?: typeof fetch;
}

const RUNNING = Symbol.for("durable-next.dev-cron");
type Holder = typeof globalThis & { [RUNNING]?: () => void };

/**
 * Starts the local cron, once per process (a dev reload that calls it again gets the running one).
 * Outside `next dev` (NODE_ENV other than "development") or with DURABLE_DEV_CRON=off it does
 * nothing. Returns a function that stops it.
 *
 * @example
 * // instrumentation.ts
 * export async function register() {
 *   if (process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "development") {
 *     (await import("./lib/durable/next")).startDevCron();
 *   }
 * }
 */
export function startDevCron(options: DevCronOptions = {}): () => void {
  if (process.env.NODE_ENV !== "development" || process.env.DURABLE_DEV_CRON === "off") return () => {};
  const holder = globalThis as Holder;
  const running = holder[RUNNING];
  if (running) return running;
  const stopCron = runDevCron(options);
  const stop = () => {
    stopCron();
    if (holder[RUNNING] === stop) delete holder[RUNNING];
  };
  holder[RUNNING] = stop;
  return stop;
}

/**
 * The cron's loop, whatever the environment: the first call after the interval, each next one
 * when `nextCallDelay` says. Returns a function that stops it. `startDevCron` is the public door.
 */
export function runDevCron(options: DevCronOptions = {}): () => void {
  const routePath = options.path ?? "/api/durable/tick";
  const intervalMs = options.intervalMs ?? Number(process.env.DURABLE_DEV_CRON_MS || 5000);
  const minDelayMs = Math.min(options.minDelayMs ?? 50, intervalMs);
  const log = options.log ?? ((message: string) => console.log(`\x1b[36m[durable cron]\x1b[0m ${message}`));
  const doFetch = options.fetch ?? globalThis.fetch;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastProblem = "";
  let announced = false;

  /** One call of the route: the report it answered, or null (a problem, said once). */
  const call = async (): Promise<TickTiming | null> => {
    const url = new URL(routePath, serverOrigin());
    let text: string;
    try {
      // Quietly: the route says it once when it resolves the same fallback.
      const bearer = options.secret ?? resolveSecret("cron", undefined, () => {});
      const response = await doFetch(url, {
        headers: { authorization: `Bearer ${bearer}`, "user-agent": "vercel-cron/1.0 (next dev)" },
        signal: AbortSignal.timeout(120_000),
      });
      text = await response.text();
      if (!response.ok) return problem(`${routePath} → ${response.status} ${text.slice(0, 300)}`);
    } catch (error) {
      // The server may still be starting or compiling the route: say so once, try again next round.
      return problem(`${routePath} could not be called yet (${(error as Error).message}); trying again`);
    }
    const report = tickTimingOf(text);
    if (report === null) return problem(`${routePath} answered, but not with a tick report: ${text.slice(0, 300)}`);
    lastProblem = "";
    if (!announced) {
      const every = `${intervalMs / 1000}s`;
      log(`calling ${url} when a run is due to wake, and at least every ${every} (Vercel Cron in production)`);
    }
    announced = true;
    if (report.claimed > 0) log(`${routePath} → ${text}`);
    return report;
  };
  const problem = (message: string): null => {
    if (message !== lastProblem) log(message);
    lastProblem = message;
    return null;
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    // Past Node's timer limit setTimeout fires at once; an early call is only a tick (rule 19).
    const delay = Math.min(ms, MAX_TIMER_MS);
    timer = setTimeout(() => {
      void call().then(
        (report) => schedule(nextCallDelay(report, intervalMs, minDelayMs)),
        () => schedule(intervalMs),
      );
    }, delay);
    timer.unref?.();
  };

  schedule(intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** What the cron reads of a tick report. */
export interface TickTiming {
  claimed: number;
  /** `nextWakeInMs` of the report: null when no run waits on time (or an older route that says nothing). */
  nextWakeInMs: number | null;
}

/**
 * How long to wait before the next call, after a tick that answered `report` (null: the call
 * failed): until the next run wakes, at least `minDelayMs` and at most `intervalMs`. A run due
 * now that the tick did not take (0 or less) is held by something a call cannot change (a
 * concurrency limit, another claimer), so the interval applies; unless this tick claimed runs,
 * when one may have come due as it ended: one call soon, then the interval again.
 */
export function nextCallDelay(report: TickTiming | null, intervalMs: number, minDelayMs: number): number {
  const wake = report?.nextWakeInMs ?? null;
  if (report === null || wake === null) return intervalMs;
  if (wake <= 0) return report.claimed > 0 ? minDelayMs : intervalMs;
  // A few ms past the wake time, so that the call lands after it by the database clock however the
  // timer rounds (the time was read before the answer travelled, which only makes the call later).
  return Math.min(intervalMs, Math.max(minDelayMs, Math.ceil(wake) + WAKE_SLACK_MS));
}

/** Added to a wake time, so that the tick lands after it by the database clock. */
const WAKE_SLACK_MS = 5;

/** The dev server's own address: Next records it when it starts listening, else localhost:PORT. */
function serverOrigin(): string {
  return process.env.__NEXT_PRIVATE_ORIGIN || `http://localhost:${process.env.PORT || 3000}`;
}

/** What a tick report says of its claims and the next wake, or null when the text is not one. */
function tickTimingOf(text: string): TickTiming | null {
  try {
    const report = JSON.parse(text) as { claimed?: unknown; nextWakeInMs?: unknown } | null;
    if (typeof report?.claimed !== "number") return null;
    const wake = report.nextWakeInMs;
    return { claimed: report.claimed, nextWakeInMs: typeof wake === "number" && Number.isFinite(wake) ? wake : null };
  } catch {
    return null;
  }
}
