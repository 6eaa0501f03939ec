// Round trips of a Drizzle tx step against a Kysely one, counted at both drivers: the store's
// statements through `connect(url, { onQuery })`, the Drizzle transaction's through Drizzle's
// logger (docs/performance.md, "Round trips").
import { sql } from "kysely";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { drizzleTx } from "@/lib/durable/drizzle";
import { createEffectTable, effects, schema } from "../contract/drizzle-fixtures";
import { createTestDatabase } from "../helpers/databases";

const statements: string[] = [];
let ddb!: NodePgDatabase<typeof schema>;

const insert = (runId: string, step: string) => ({ runId, step, attempt: 1, amount: 1 });
const both = defineWorkflow({
  name: "drizzle-round-trips",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("call", () => 1);
    await ctx.step.tx("kysely", async (tx) => {
      await sql`insert into drizzle_effects (run_id, step, attempt, amount)
                values (${ctx.runId}, 'kysely', 1, 1)`.execute(tx);
    });
    await drizzleTx(ctx, "drizzle-1", ddb, async (tx) => {
      await tx.insert(effects).values(insert(ctx.runId, "drizzle-1"));
    });
    await drizzleTx(ctx, "drizzle-2", ddb, async (tx) => {
      await tx.insert(effects).values(insert(ctx.runId, "drizzle-2"));
    });
    return "done";
  },
});

let durable: Durable;
let drizzlePool: pg.Pool;
beforeAll(async () => {
  const url = await createTestDatabase("durable_drizzle_round_trips");
  const db = await connect(url, { driver: "pg", onQuery: (q) => statements.push(q) });
  drizzlePool = new pg.Pool({ connectionString: url });
  ddb = drizzle({ client: drizzlePool, schema, logger: { logQuery: (q) => statements.push(q) } });
  durable = createDurable({ db, workflows: [both], secrets: { durable: "t" } });
  await durable.migrate();
  await createEffectTable(ddb);
});
afterAll(async () => {
  await durable?.close();
  await drizzlePool?.end();
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
                : /drizzle_effects/.test(q)
                  ? "effect"
                  : q.slice(0, 30);

it("a Drizzle tx step costs what a Kysely one does, plus one check on the first step of a process", async () => {
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
    "same-database check", // the first Drizzle step of this db and store in the process
    "effect",
    "receipt",
    "commit",
    ...tx, // drizzleTx: its statement + 3, as ctx.step.tx
    "finish + claim", // the completion, and the loop's next claim
    "receipt",
    ...tx,
    ...tx,
    ...tx, // the second run: no check any more
    "finish + claim",
  ]);
});
