// A stand-in for Vercel Cron under `next dev`: it calls the tick route with the cron bearer every
// few seconds, so sleeps, retry delays and timeouts come due in development with nothing else
// running. The app's `instrumentation.ts` starts it (docs/decisions.md, "A local cron in the
// server process"). It goes through HTTP rather than calling `tick()` in process so that each
// call runs the workflows as the dev server last compiled them, as Vercel Cron would.
import { resolveSecret } from "../auth/secrets";

export interface DevCronOptions {
  /** The route to call; default "/api/durable/tick". */
  path?: string;
  /** Time between calls; default DURABLE_DEV_CRON_MS, else 5000. */
  intervalMs?: number;
  /** The cron bearer; default CRON_SECRET, else the development secret the routes fall back to. */
  secret?: string;
  /** Where reports and problems go (console.log with a prefix). */
  log?: (message: string) => void;
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

  const routePath = options.path ?? "/api/durable/tick";
  const intervalMs = options.intervalMs ?? Number(process.env.DURABLE_DEV_CRON_MS || 5000);
  const log = options.log ?? ((message: string) => console.log(`\x1b[36m[durable cron]\x1b[0m ${message}`));
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastProblem = "";
  let announced = false;

  const call = async () => {
    const url = new URL(routePath, serverOrigin());
    let text: string;
    try {
      // Quietly: the route says it once when it resolves the same fallback.
      const bearer = options.secret ?? resolveSecret("cron", undefined, () => {});
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${bearer}`, "user-agent": "vercel-cron/1.0 (next dev)" },
        signal: AbortSignal.timeout(120_000),
      });
      text = await response.text();
      if (!response.ok) return problem(`${routePath} → ${response.status} ${text.slice(0, 300)}`);
    } catch (error) {
      // The server may still be starting or compiling the route: say so once, try again next round.
      return problem(`${routePath} could not be called yet (${(error as Error).message}); trying again`);
    }
    const claimed = tickReportClaimed(text);
    if (claimed === null) return problem(`${routePath} answered, but not with a tick report: ${text.slice(0, 300)}`);
    lastProblem = "";
    if (!announced) log(`calling ${url} every ${intervalMs / 1000}s, as Vercel Cron will in production`);
    announced = true;
    if (claimed > 0) log(`${routePath} → ${text}`);
  };
  const problem = (message: string) => {
    if (message !== lastProblem) log(message);
    lastProblem = message;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void call().finally(schedule), intervalMs);
    timer.unref();
  };

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    if (holder[RUNNING] === stop) delete holder[RUNNING];
  };
  holder[RUNNING] = stop;
  schedule();
  return stop;
}

/** The dev server's own address: Next records it when it starts listening, else localhost:PORT. */
function serverOrigin(): string {
  return process.env.__NEXT_PRIVATE_ORIGIN || `http://localhost:${process.env.PORT || 3000}`;
}

/** How many runs a tick report claimed, or null when the text is not one. */
function tickReportClaimed(text: string): number | null {
  try {
    const report = JSON.parse(text) as { claimed?: unknown } | null;
    return typeof report?.claimed === "number" ? report.claimed : null;
  } catch {
    return null;
  }
}
