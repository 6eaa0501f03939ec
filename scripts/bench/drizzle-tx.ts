// What a Drizzle tx step costs beside a Kysely one (docs/performance.md, "Drizzle tx steps"):
// statements per run, counted at both drivers (the store's `onQuery`, Drizzle's logger), and the
// time of one run (start, then advance(id)) whose only step is one insert in a `tx` step, the two
// kinds interleaved, on PGlite, on PostgreSQL through node-postgres, and through Neon's driver
// over a local WebSocket proxy. Printed, never asserted; tests/postgres/drizzle-round-trips.test.ts holds the floor.
//
//   npx tsx scripts/bench/drizzle-tx.ts [--runs N]
import { Pool as NeonPool } from "@neondatabase/serverless";
import { drizzle as drizzleNeon } from "drizzle-orm/neon-serverless";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { sql } from "kysely";
import pg from "pg";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "../../lib/durable";
import { drizzleTx, pgliteOf } from "../../lib/durable/drizzle";
import { createEffectTable, effects, schema, type TestDrizzle } from "../../tests/contract/drizzle-fixtures";
import { configureNeonForLocalProxy, startNeonProxy } from "../../tests/helpers/neon-proxy";
import { dropCreatedDatabases, freshServerDatabase } from "./databases";

type Target = "pglite" | "pg" | "neon";
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 1000;

let statements = 0;
const count = () => {
  statements++;
};

function workflows(db: TestDrizzle) {
  const kysely = defineWorkflow({
    name: "bench-kysely-tx",
    input: z.object({}),
    async run(ctx) {
      await ctx.step.tx("write", async (tx) => {
        await sql`insert into drizzle_effects (run_id, step, attempt, amount)
                  values (${ctx.runId}, 'write', 1, 1)`.execute(tx);
      });
    },
  });
  const drizzle = defineWorkflow({
    name: "bench-drizzle-tx",
    input: z.object({}),
    async run(ctx) {
      await drizzleTx(ctx, "write", db, async (tx) => {
        await tx.insert(effects).values({ runId: ctx.runId, step: "write", attempt: 1, amount: 1 });
      });
    },
  });
  return { kysely, drizzle };
}

async function openTarget(target: Target): Promise<{ durable: Durable; db: TestDrizzle; close(): Promise<void> }> {
  const logger = { logQuery: count };
  if (target === "pglite") {
    const store = await connect("memory://", { onQuery: count });
    const db = drizzlePglite({ client: pgliteOf(store), schema, logger });
    return {
      durable: createDurable({ db: store, workflows: [], secrets: { durable: "b" } }),
      db,
      close: async () => {},
    };
  }
  const url = await freshServerDatabase(`drizzle_${target}`);
  const store = await connect(url, { driver: target, onQuery: count });
  const pool = target === "neon" ? new NeonPool({ connectionString: url }) : new pg.Pool({ connectionString: url });
  const db: TestDrizzle =
    target === "neon"
      ? drizzleNeon({ client: pool as NeonPool, schema, logger })
      : drizzlePg({ client: pool as pg.Pool, schema, logger });
  return {
    durable: createDurable({ db: store, workflows: [], secrets: { durable: "b" } }),
    db,
    close: () => pool.end(),
  };
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(target: Target) {
  const { durable: base, db, close } = await openTarget(target);
  await base.migrate();
  await createEffectTable(db);
  const wf = workflows(db);
  const durable = createDurable({ db: base.db, workflows: [wf.kysely, wf.drizzle], secrets: { durable: "b" } });
  let n = 0;
  const once = async (which: "kysely" | "drizzle") => {
    const { id } = await durable.start(wf[which], {}, { id: `${which}-${n++}` });
    const started = performance.now();
    await durable.advance(id);
    return performance.now() - started;
  };
  const statementsOf = async (which: "kysely" | "drizzle") => {
    statements = 0;
    await once(which);
    return statements;
  };
  const first = { kysely: await statementsOf("kysely"), drizzle: await statementsOf("drizzle") };
  for (let i = 0; i < 30; i++) {
    await once("kysely");
    await once("drizzle");
  }
  const warm = { kysely: await statementsOf("kysely"), drizzle: await statementsOf("drizzle") };
  const times = { kysely: [] as number[], drizzle: [] as number[] };
  // Interleaved run by run, the order swapped each time: a load change hits both alike.
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? (["kysely", "drizzle"] as const) : (["drizzle", "kysely"] as const);
    for (const which of order) times[which].push(await once(which));
  }
  await durable.close();
  await close();
  return { first, warm, kysely: p50(times.kysely), drizzle: p50(times.drizzle) };
}

const proxy = await startNeonProxy();
configureNeonForLocalProxy(proxy.port);
try {
  console.log(`Drizzle tx step vs Kysely tx step: one run = start + advance(id) of a run whose only step is`);
  console.log(`one insert in a tx step; ${RUNS} runs of each, interleaved; p50 per run. On PGlite, Drizzle's`);
  console.log("begin and commit are PGlite's own transaction() and not seen by its logger.");
  console.log("target  | statements per run (first / warm) kysely, drizzle | p50 ms kysely | p50 ms drizzle | ratio");
  for (const target of ["pglite", "pg", "neon"] as const) {
    const r = await measure(target);
    const cells = [
      target.padEnd(7),
      `${r.first.kysely} / ${r.warm.kysely}, ${r.first.drizzle} / ${r.warm.drizzle}`.padEnd(51),
      r.kysely.toFixed(2).padStart(13),
      r.drizzle.toFixed(2).padStart(14),
      (r.drizzle / r.kysely).toFixed(2).padStart(5),
    ];
    console.log(cells.join(" | "));
  }
} finally {
  await proxy.close();
  await dropCreatedDatabases();
}
