// npm run bench: the figures of DESIGN.md §7, printed, never asserted by timing.
// Round trips are counted at the driver on PGlite and on the real server (TEST_DATABASE_URL).
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "../lib/durable";

const SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const counted = defineWorkflow({
  name: "bench-counted",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("call", () => 1);
    await ctx.step.tx("write", async (tx) => {
      await sql`insert into bench_effects (run_id) values (${ctx.runId})`.execute(tx);
    });
    await ctx.step.value("stamp", () => 2);
    await ctx.step.sleep("nap", "1h");
    return "done";
  },
});

const fiveSteps = defineWorkflow({
  name: "bench-five-steps-two-sleeps",
  input: z.object({ nap: z.string() }),
  async run(ctx, input) {
    await ctx.step.run("one", () => 1);
    await ctx.step.sleep("nap-1", input.nap);
    await ctx.step.run("two", () => 2);
    await ctx.step.run("three", () => 3);
    await ctx.step.sleep("nap-2", input.nap);
    await ctx.step.run("four", () => 4);
    await ctx.step.run("five", () => 5);
    return "done";
  },
});

async function freshServerDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function open(target: "pglite" | "postgres", name: string, onQuery?: (q: string) => void): Promise<Kysely<any>> {
  if (target === "pglite") return connect("memory://", { onQuery });
  return connect(await freshServerDatabase(name), { driver: "pg", onQuery });
}

/** Statements per engine operation, from one traced run of `counted`. */
async function roundTrips(target: "pglite" | "postgres") {
  const statements: string[] = [];
  const db = await open(target, "durable_bench_rt", (q) => statements.push(q));
  const durable = createDurable({ db, workflows: [counted], secrets: { durable: "bench" }, log: () => {} });
  await durable.migrate();
  await sql`create table bench_effects (run_id text)`.execute(db);
  await durable.start(counted, {}, { id: "rt" });
  statements.length = 0;
  await durable.tick({ budgetMs: 40_000 });
  const claim = statements.findIndex((q) => q.includes("durable_claim_run"));
  const receipts = statements.map((q, i) => (q.includes("durable_record_step") ? i : -1)).filter((i) => i >= 0);
  const suspend = statements.findIndex((q) => q.includes("durable_suspend_run"));
  const txBegin = statements.findIndex((q) => /^begin/i.test(q));
  const txCommit = statements.findIndex((q) => /^commit/i.test(q));
  await durable.testing.advanceClock("1h");
  statements.length = 0;
  await durable.tick({ budgetMs: 40_000 });
  const completion = statements.filter((q) => !q.includes("durable_claim_run")).length;
  await durable.close();
  return {
    claim: claim === 0 ? 1 : NaN,
    run: receipts[0]! - claim,
    tx: txCommit - txBegin + 1,
    txOwn: 1,
    suspension: suspend >= 0 ? 1 : NaN,
    completion,
  };
}

/** Claims (replays) until a 5-step run with two 200 ms sleeps completes, with and without in-process waits. */
async function replays(target: "pglite" | "postgres", inProcessWait: string) {
  const db = await open(target, "durable_bench_replays");
  const durable: Durable = createDurable({ db, workflows: [fiveSteps], secrets: { durable: "bench" }, defaults: { inProcessWait }, log: () => {} });
  await durable.migrate();
  const runs = 5;
  for (let i = 0; i < runs; i++) await durable.start(fiveSteps, { nap: "200ms" }, { id: `r${i}` });
  for (;;) {
    await durable.tick({ budgetMs: 40_000 });
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from durable_runs where status <> 'completed'`.execute(db);
    if (rows[0]!.n === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { rows } = await sql<{ claims: number }>`select avg(attempts)::float8 as claims from durable_runs`.execute(db);
  await durable.close();
  return rows[0]!.claims;
}

const table = (rows: string[][]) => {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c]!)).join("  "));
};

const rt = { pglite: await roundTrips("pglite"), postgres: await roundTrips("postgres") };
console.log("\nDatabase round trips per operation (counted at the driver; DESIGN.md §7 floors)\n");
table([
  ["operation", "floor", "PGlite", "PostgreSQL"],
  ["claim + ledger load", "1", String(rt.pglite.claim), String(rt.postgres.claim)],
  ["run step", "1", String(rt.pglite.run), String(rt.postgres.run)],
  ["tx step (1 own statement)", "1 + 3", `${rt.pglite.txOwn} + ${rt.pglite.tx - rt.pglite.txOwn}`, `${rt.postgres.txOwn} + ${rt.postgres.tx - rt.postgres.txOwn}`],
  ["sleep suspension", "1", String(rt.pglite.suspension), String(rt.postgres.suspension)],
  ["completion", "1", String(rt.pglite.completion), String(rt.postgres.completion)],
]);

console.log("\nClaims per completed run: 5 steps and 2 sleeps of 200 ms (mean of 5 runs)\n");
table([
  ["in-process waits", "PGlite", "PostgreSQL"],
  ["on (inProcessWait 5s)", String(await replays("pglite", "5s")), String(await replays("postgres", "5s"))],
  ["off (inProcessWait 0)", String(await replays("pglite", "0ms")), String(await replays("postgres", "0ms"))],
]);
