// What a Prisma tx step costs beside a Kysely one (docs/performance.md, "Prisma tx steps"): the
// time of one run (start, then advance(id)) whose only step is one insert in a `tx` step, the two
// kinds interleaved, on PGlite (pglite-prisma-adapter on the store's instance), on PostgreSQL
// through @prisma/adapter-pg, and through Neon's adapter over a local WebSocket proxy. Printed,
// never asserted; tests/postgres/prisma-round-trips.test.ts holds the floor of round trips.
//
//   npx tsx scripts/bench/prisma-tx.ts [--runs N]
import { PrismaPGlite } from "pglite-prisma-adapter";
import { sql } from "kysely";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "../../lib/durable";
import { pgliteOf, prismaTx } from "../../lib/durable/prisma";
import { createEffectTable, prismaOn } from "../../tests/contract/prisma-fixtures";
import { PrismaClient } from "../../tests/fixtures/prisma/generated/client";
import { configureNeonForLocalProxy, startNeonProxy } from "../../tests/helpers/neon-proxy";
import { dropCreatedDatabases, freshServerDatabase } from "./databases";

type Target = "pglite" | "pg" | "neon";
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 1000;

function workflows(prisma: PrismaClient) {
  const kysely = defineWorkflow({
    name: "bench-kysely-tx",
    input: z.object({}),
    async run(ctx) {
      await ctx.step.tx("write", async (tx) => {
        await sql`insert into prisma_effects (run_id, step, attempt, amount)
                  values (${ctx.runId}, 'write', 1, 1)`.execute(tx);
      });
    },
  });
  const viaPrisma = defineWorkflow({
    name: "bench-prisma-tx",
    input: z.object({}),
    async run(ctx) {
      await prismaTx(ctx, "write", prisma, async (tx) => {
        await tx.effect.create({ data: { runId: ctx.runId, step: "write", attempt: 1, amount: 1 } });
      });
    },
  });
  return { kysely, prisma: viaPrisma };
}

async function openTarget(target: Target): Promise<{ durable: Durable; prisma: PrismaClient }> {
  if (target === "pglite") {
    const store = await connect("memory://");
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(pgliteOf(store)) });
    return { durable: createDurable({ db: store, workflows: [], secrets: { durable: "b" } }), prisma };
  }
  const url = await freshServerDatabase(`prisma_${target}`);
  const store = await connect(url, { driver: target });
  return {
    durable: createDurable({ db: store, workflows: [], secrets: { durable: "b" } }),
    prisma: prismaOn(target, url, 10),
  };
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(target: Target) {
  const { durable: base, prisma } = await openTarget(target);
  await base.migrate();
  await createEffectTable(prisma);
  const wf = workflows(prisma);
  const durable = createDurable({ db: base.db, workflows: [wf.kysely, wf.prisma], secrets: { durable: "b" } });
  let n = 0;
  const once = async (which: "kysely" | "prisma") => {
    const { id } = await durable.start(wf[which], {}, { id: `${which}-${n++}` });
    const started = performance.now();
    await durable.advance(id);
    return performance.now() - started;
  };
  for (let i = 0; i < 30; i++) {
    await once("kysely");
    await once("prisma");
  }
  const times = { kysely: [] as number[], prisma: [] as number[] };
  // Interleaved run by run, the order swapped each time: a load change hits both alike.
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? (["kysely", "prisma"] as const) : (["prisma", "kysely"] as const);
    for (const which of order) times[which].push(await once(which));
  }
  await durable.close();
  await prisma.$disconnect();
  return { kysely: p50(times.kysely), prisma: p50(times.prisma) };
}

const proxy = await startNeonProxy();
configureNeonForLocalProxy(proxy.port);
try {
  console.log("Prisma tx step vs Kysely tx step: one run = start + advance(id) of a run whose only step is");
  console.log(`one insert in a tx step; ${RUNS} runs of each, interleaved; p50 per run.`);
  console.log("target  | p50 ms kysely | p50 ms prisma | ratio");
  for (const target of ["pglite", "pg", "neon"] as const) {
    const r = await measure(target);
    const cells = [
      target.padEnd(7),
      r.kysely.toFixed(2).padStart(13),
      r.prisma.toFixed(2).padStart(13),
      (r.prisma / r.kysely).toFixed(2).padStart(5),
    ];
    console.log(cells.join(" | "));
  }
} finally {
  await proxy.close();
  await dropCreatedDatabases();
}
