// CPU per run of a 1-loop drain: `runs` runs of 3 `run` steps started, then drained by one tick
// loop (tick until a tick claims nothing), on a fresh server database. Prints node and server
// (the database's backends) CPU ms per run as JSON; `--profile` writes a V8 CPU profile of the
// drain alone. What docs/performance.md, "Prepared statements" reports. Usage:
//   TEST_DATABASE_URL=… npx tsx scripts/drain-cpu.ts [--runs 2000] [--prepared on|off] [--profile file]
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "../lib/durable";
import { measureSessionsCpu } from "./bench/cpu";
import { createServerDatabase, dropServerDatabases } from "./support/server-database";

const arg = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
};
const runs = Number(arg("runs") ?? 2000);
const prepared = (arg("prepared") ?? "on") === "on";
const profile = arg("profile");

const threeRunSteps = defineWorkflow({
  name: "drain-three-run-steps",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const a = await ctx.step.run("a", () => input.n);
    const b = await ctx.step.run("b", () => a + 1);
    return ctx.step.run("c", () => b + 1);
  },
});

async function main() {
  const name = `durable_drain_cpu_${process.pid}`;
  const url = await createServerDatabase(name);
  let statements = 0;
  const db = await connect(url, { driver: "pg", onQuery: () => statements++ });
  const durable = createDurable({
    db,
    workflows: [threeRunSteps],
    preparedStatements: prepared,
    secrets: { durable: "drain" },
    log: () => {},
  });
  await durable.migrate();
  // Warm the pool and the code paths on 50 runs, then measure the drain of `runs` alone.
  await startRuns(durable, 50);
  await drain(durable);
  await startRuns(durable, runs);
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  statements = 0;
  const stop = await measureSessionsCpu(url);
  const completed = await drain(durable);
  const cpu = await stop();
  if (session) {
    const { profile: data } = await session.post("Profiler.stop");
    writeFileSync(profile!, JSON.stringify(data));
  }
  await durable.close();
  await dropServerDatabases([name]);
  const per = (ms: number | null) => (ms === null ? null : Number(((ms * 1000) / completed).toFixed(1)));
  console.log(
    JSON.stringify({
      prepared,
      completed,
      statementsPerRun: statements / completed,
      nodeUsPerRun: per(cpu.node),
      serverUsPerRun: per(cpu.server),
    }),
  );
}

async function startRuns(durable: Durable, count: number) {
  for (let from = 0; from < count; from += 1000) {
    const n = Math.min(1000, count - from);
    await durable.startMany(
      threeRunSteps,
      Array.from({ length: n }, (_, i) => ({ n: from + i })),
    );
  }
}

/** One tick loop until a tick claims nothing; the runs it completed. */
async function drain(durable: Durable): Promise<number> {
  let completed = 0;
  for (;;) {
    const report = await durable.tick({ budgetMs: 40_000 });
    completed += report.completed;
    if (report.claimed === 0) return completed;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
