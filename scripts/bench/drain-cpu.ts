// CPU per run of a 1-loop drain: `runs` runs of 3 `run` steps started, then drained by one tick
// loop (tick until a tick claims nothing), on a fresh server database. Prints node and server
// (the database's backends) CPU ms per run as JSON; `--profile` writes a V8 CPU profile of the
// drain alone; `--interleave` drains with prepared statements on and off in one process, 10
// segments each, alternating (`--off-first`: the off side opened and measured first). What
// docs/performance.md, "Prepared statements" reports. `--statements` (the server must load
// pg_stat_statements, track = all) also prints the drain's statements, nested ones included, by
// execution time: µs and calls a run (docs/performance.md, "Less per statement"). Usage:
//   TEST_DATABASE_URL=… npx tsx scripts/bench/drain-cpu.ts [--runs 2000] [--prepared on|off | --interleave
//     [--off-first]] [--profile file] [--statements]
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import pg from "pg";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "../../lib/durable";
import { measureSessionsCpu } from "./cpu";
import { createServerDatabase, dropServerDatabases } from "../support/server-database";

const arg = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
};
const runs = Number(arg("runs") ?? 2000);
const prepared = (arg("prepared") ?? "on") === "on";
const profile = arg("profile");
const interleave = process.argv.includes("--interleave");
const statements = process.argv.includes("--statements");

const THIS_DATABASE = "(select oid from pg_database where datname = current_database())";

/** Runs `text` on the database at `url`, on a connection of its own. */
async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** The side's statements by execution time since the reset: µs and calls a run, all of them together
 * (nested statements counted in their callers' times too), then the 25 costliest. */
async function statementCosts(side: Side) {
  const [all] = await query(
    side.url,
    `select sum(calls) as calls from pg_stat_statements where dbid = ${THIS_DATABASE} and query not like '%pg_stat%'`,
  );
  const rows = await query(
    side.url,
    `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls, total_exec_time
       from pg_stat_statements where dbid = ${THIS_DATABASE} order by total_exec_time desc limit 25`,
  );
  const total = { statementsPerRun: Number((Number(all!.calls) / side.runs).toFixed(2)), query: "(all, nested too)" };
  return [
    total,
    ...rows.map((row) => ({
      usPerRun: Number(((row.total_exec_time * 1000) / side.runs).toFixed(1)),
      callsPerRun: Number((row.calls / side.runs).toFixed(2)),
      query: String(row.query).slice(0, 140),
    })),
  ];
}

const threeRunSteps = defineWorkflow({
  name: "drain-three-run-steps",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const a = await ctx.step.run("a", () => input.n);
    const b = await ctx.step.run("b", () => a + 1);
    return ctx.step.run("c", () => b + 1);
  },
});

/** A durable on a fresh database, 50 runs drained to warm its pool and code paths. */
async function openDrain(name: string, preparedStatements: boolean) {
  const url = await createServerDatabase(name);
  const counter = { statements: 0 };
  const db = await connect(url, { driver: "pg", onQuery: () => counter.statements++ });
  const durable = createDurable({
    db,
    workflows: [threeRunSteps],
    preparedStatements,
    secrets: { durable: "drain" },
    log: () => {},
  });
  await durable.migrate();
  await startRuns(durable, 50);
  await drain(durable);
  return { name, url, durable, counter, preparedStatements, node: 0, server: 0, runs: 0, statements: 0 };
}

type Side = Awaited<ReturnType<typeof openDrain>>;

/** Starts `runs` runs on `side` and drains them by one tick loop, adding up what it cost. */
async function measureSegment(side: Side, runs: number) {
  await startRuns(side.durable, runs);
  side.counter.statements = 0;
  const stop = await measureSessionsCpu(side.url);
  side.runs += await drain(side.durable);
  const cpu = await stop();
  side.node += cpu.node;
  side.server += cpu.server ?? Number.NaN;
  side.statements += side.counter.statements;
}

async function main() {
  // Which side is opened and measured first costs it a few percent of node CPU (both sides off
  // differ so too): `--off-first` swaps them, and a comparison takes both orders.
  const settings = interleave ? (process.argv.includes("--off-first") ? [false, true] : [true, false]) : [prepared];
  const sides: Side[] = [];
  for (const [i, on] of settings.entries()) sides.push(await openDrain(`durable_drain_cpu_${i}_${process.pid}`, on));
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  if (statements) {
    for (const side of sides) {
      await query(side.url, "create extension if not exists pg_stat_statements");
      await query(side.url, `select pg_stat_statements_reset(0, ${THIS_DATABASE}, 0)`);
    }
  }
  const segments = interleave ? 10 : 1;
  for (let i = 0; i < segments; i++) {
    // Alternate which side goes first, so a load change hits both alike.
    const order = i % 2 ? [...sides].reverse() : sides;
    for (const side of order) await measureSegment(side, runs / segments);
  }
  if (session) {
    const { profile: data } = await session.post("Profiler.stop");
    writeFileSync(profile!, JSON.stringify(data));
  }
  const costs = statements ? await Promise.all(sides.map(statementCosts)) : [];
  for (const side of sides) await side.durable.close();
  await dropServerDatabases(sides.map((side) => side.name));
  const per = (ms: number, side: Side) => Number(((ms * 1000) / side.runs).toFixed(1));
  for (const [i, side] of sides.entries()) {
    if (statements) for (const cost of costs[i]!) console.log(JSON.stringify(cost));
    console.log(
      JSON.stringify({
        prepared: side.preparedStatements,
        completed: side.runs,
        statementsPerRun: side.statements / side.runs,
        nodeUsPerRun: per(side.node, side),
        serverUsPerRun: per(side.server, side),
      }),
    );
  }
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
