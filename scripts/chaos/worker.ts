// A chaos worker: one process, like one function instance, calling tick() in a loop until it has
// been idle for a while. Optional chaos from its environment: a failpoint (DURABLE_FAILPOINT),
// a per-tick chance of being killed at a random failpoint (KILL_RATE, seeded; KILL_POINTS, comma-
// separated, names the failpoints it draws from), a skewed clock (CLOCK_SKEW_MS, via
// skew-clock.mjs). TICK_CONCURRENCY advances several runs per tick; FAN_OUT calls the tick route
// instead, which fans out to itself up to FAN_OUT more times: invocations sharing one instance, as
// on Fluid compute, and dying with it. WORK_CONCURRENCY runs worker mode (`work()`, that many
// loops, budgets of WORKER_BUDGET_MS) instead of ticks, for IDLE_EXIT_MS in all. It prints READY as
// it starts ticking (or working).
import pg from "pg";
import { armFailpoint, type FailpointName } from "../../lib/durable/engine/run/failpoints";
import { connect, createDurable } from "../../lib/durable";
import { CRASH_POINTS } from "./crash-points";
import { createDurableRoutes } from "../../lib/durable/next";
import { attachSink, chaosWebhooks, chaosWorkflows } from "./workflow";
import { randomFrom, seeded } from "./random";

const url = new URL(process.env.CHAOS_URL!);
url.searchParams.set("application_name", "chaos-worker");
const budgetMs = Number(process.env.WORKER_BUDGET_MS ?? 3_000);
const idleExitMs = Number(process.env.IDLE_EXIT_MS ?? 6_000);
const killRate = Number(process.env.KILL_RATE ?? 0);
const tickConcurrency = Number(process.env.TICK_CONCURRENCY ?? 1);
const fanOut = Number(process.env.FAN_OUT ?? 0);
const workConcurrency = Number(process.env.WORK_CONCURRENCY ?? 0);
const random = seeded(Number(process.env.SEED ?? 1));
const points = (process.env.KILL_POINTS?.split(",") as FailpointName[] | undefined) ?? CRASH_POINTS;

const sinkPool = new pg.Pool({ connectionString: url.toString(), max: 2 });
sinkPool.on("error", () => {});
attachSink(sinkPool);
const durable = createDurable({
  db: await connect(url.toString(), { driver: "pg", poolSize: fanOut > 0 ? 6 : 2 }),
  workflows: chaosWorkflows,
  webhooks: chaosWebhooks(),
  secrets: { durable: "chaos" },
  tickConcurrency,
  defaults: { lease: "1s", margin: "300ms", budget: `${budgetMs}ms` },
  log: () => {},
});

const cron = "chaos-cron";
const routes = createDurableRoutes(async () => durable, {
  secrets: { durable: "chaos", cron },
  maxDuration: (budgetMs + 500) / 1000,
  budgetMarginMs: 500,
  maxFanOut: fanOut,
  fetch: (request) => routes.tick.GET(request),
  log: () => {},
});

/** One invocation: tick() itself, or the tick route and the ticks it fanned out to. */
async function invoke(): Promise<number> {
  if (fanOut === 0) return (await durable.tick({ budgetMs })).claimed;
  const request = new Request("http://chaos.test/api/durable/tick", { headers: { authorization: `Bearer ${cron}` } });
  const response = await routes.tick.GET(request);
  if (!response.ok) throw new Error(`tick answered ${response.status}`);
  const report = await response.json();
  await routes.idle();
  return report.claimed + report.fannedOut;
}

if (workConcurrency > 0) {
  process.stdout.write("READY\n");
  const report = await durable.work({ concurrency: workConcurrency, signal: AbortSignal.timeout(idleExitMs) });
  process.stdout.write(`EXIT claimed=${report.claimed}\n`);
  await durable.close();
  await sinkPool.end();
  process.exit(0);
}

let idleSince = performance.now();
let errors = 0;
process.stdout.write("READY\n");
for (;;) {
  if (killRate > 0 && random() < killRate) armFailpoint(`${randomFrom(random, points)}:kill`);
  try {
    if ((await invoke()) > 0) idleSince = performance.now();
  } catch {
    // A terminated backend or a refused connection fails this invocation, as on a platform.
    errors++;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (performance.now() - idleSince > idleExitMs) break;
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write(`EXIT errors=${errors}\n`);
await durable.close();
await sinkPool.end();
