// A chaos worker: one process, like one function instance, calling tick() in a loop until it has
// been idle for a while. Optional chaos from its environment: a failpoint (DURABLE_FAILPOINT),
// a per-tick chance of being killed at a random failpoint (KILL_RATE, seeded), a skewed clock
// (CLOCK_SKEW_MS, via skew-clock.mjs).
import pg from "pg";
import { armFailpoint, type FailpointName } from "../../lib/durable/engine/failpoints";
import { connect, createDurable } from "../../lib/durable";
import { chaosOrder, attachSink } from "./workflow";
import { randomFrom, seeded } from "./random";

const url = new URL(process.env.CHAOS_URL!);
url.searchParams.set("application_name", "chaos-worker");
const budgetMs = Number(process.env.WORKER_BUDGET_MS ?? 3_000);
const idleExitMs = Number(process.env.IDLE_EXIT_MS ?? 6_000);
const killRate = Number(process.env.KILL_RATE ?? 0);
const random = seeded(Number(process.env.SEED ?? 1));
const points: FailpointName[] = [
  "claim.after",
  "run.before-body",
  "run.after-body",
  "run.after-receipt",
  "tx.after-effect",
  "tx.after-receipt",
  "tx.after-commit",
  "finish.before",
  "finish.after",
];

const sinkPool = new pg.Pool({ connectionString: url.toString(), max: 2 });
sinkPool.on("error", () => {});
attachSink(sinkPool);
const durable = createDurable({
  db: await connect(url.toString(), { driver: "pg", poolSize: 2 }),
  workflows: [chaosOrder],
  secrets: { durable: "chaos" },
  defaults: { lease: "1s", margin: "300ms" },
  log: () => {},
});

let idleSince = performance.now();
let errors = 0;
for (;;) {
  if (killRate > 0 && random() < killRate) armFailpoint(`${randomFrom(random, points)}:kill`);
  try {
    const report = await durable.tick({ budgetMs });
    if (report.claimed > 0) idleSince = performance.now();
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
