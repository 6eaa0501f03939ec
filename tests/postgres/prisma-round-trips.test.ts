// Round trips of a Prisma tx step against a Kysely one, counted at both pools: the store's
// statements through `connect(url, { onQuery })`, the Prisma transaction's at the pg pool its
// adapter runs on (Prisma's own query log leaves out BEGIN), as tests/postgres/drizzle-round-trips.test.ts
// counts Drizzle's (docs/guide/prisma.md, "What it costs").
import { PrismaPg } from "@prisma/adapter-pg";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { prismaTx } from "@/lib/durable/prisma";
import { createEffectTable } from "../contract/prisma-fixtures";
import { PrismaClient } from "../fixtures/prisma/generated/client";
import { createTestDatabase } from "../helpers/databases";

const statements: string[] = [];
let prisma!: PrismaClient;

const insert = (runId: string, step: string) => ({ data: { runId, step, attempt: 1, amount: 1 } });
const both = defineWorkflow({
  name: "prisma-round-trips",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("call", () => 1);
    await ctx.step.tx("kysely", async (tx) => {
      await sql`insert into prisma_effects (run_id, step, attempt, amount)
                values (${ctx.runId}, 'kysely', 1, 1)`.execute(tx);
    });
    await prismaTx(ctx, "prisma-1", prisma, async (tx) => {
      await tx.effect.create(insert(ctx.runId, "prisma-1"));
    });
    await prismaTx(ctx, "prisma-2", prisma, async (tx) => {
      await tx.effect.create(insert(ctx.runId, "prisma-2"));
    });
    return "done";
  },
});

let durable: Durable;
let prismaPool: pg.Pool;
beforeAll(async () => {
  const url = await createTestDatabase("durable_prisma_round_trips");
  const db = await connect(url, { driver: "pg", onQuery: (q) => statements.push(q) });
  prismaPool = new pg.Pool({ connectionString: url });
  // Every statement a client of Prisma's pool sends, BEGIN and COMMIT included.
  prismaPool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      statements.push(typeof first === "string" ? first : first.text);
      return query(...args);
    };
  });
  prisma = new PrismaClient({ adapter: new PrismaPg(prismaPool) });
  durable = createDurable({ db, workflows: [both], secrets: { durable: "t" } });
  await durable.migrate();
  await createEffectTable(prisma);
});
afterAll(async () => {
  await durable?.close();
  await prisma?.$disconnect();
  await prismaPool?.end();
});

const kindOf = (q: string) =>
  /durable_finish_and_claim/.test(q)
    ? "finish + claim"
    : /durable_release_rate_holds/.test(q)
      ? "rate holds"
      : /durable_claim_run/.test(q)
        ? "claim"
        : /durable_record_step/.test(q)
          ? "receipt"
          : /durable_heartbeat/.test(q)
            ? "same-database check"
            : /^begin/i.test(q)
              ? "begin"
              : /^commit/i.test(q)
                ? "commit"
                : /prisma_effects/.test(q)
                  ? "effect"
                  : q.slice(0, 30);

it("a Prisma tx step costs what a Kysely one does, plus one check on the first step of a process", async () => {
  await durable.start(both, {}, { id: "rt-1" });
  await durable.start(both, {}, { id: "rt-2" });
  statements.length = 0;
  expect(await durable.tick({ budgetMs: 40_000 })).toMatchObject({ claimed: 2, completed: 2 });
  // Up to the last completion: what the tick does after its loops (its report) is not the steps'.
  const all = statements.map(kindOf);
  const kinds = all.slice(0, all.lastIndexOf("finish + claim") + 1);
  const tx = ["begin", "effect", "receipt", "commit"];
  expect(kinds).toEqual([
    // The instance's first tick looks for runs held under a changed rate limit (once a minute).
    "rate holds",
    "claim",
    "receipt", // the run step's held-back receipt, written before the Kysely tx step starts
    ...tx, // ctx.step.tx
    "begin",
    "same-database check", // the first Prisma step of this client and store in the process
    "effect",
    "receipt",
    "commit",
    ...tx, // prismaTx: its statement + 3, as ctx.step.tx
    "finish + claim", // the completion, and the loop's next claim
    "receipt",
    ...tx,
    ...tx,
    ...tx, // the second run: no check any more
    "finish + claim",
  ]);
});
