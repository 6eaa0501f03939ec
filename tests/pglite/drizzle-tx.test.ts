// drizzleTx over Drizzle's PGlite driver, on the embedded database's one session (pgliteOf), and
// under createTestDurable.
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, connect, createDurable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { drizzleTx, pgliteOf } from "@/lib/durable/drizzle";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";
import { runDrizzleContract } from "../contract/drizzle-contract";
import { createEffectTable, effectRows, effects, schema, type TestDrizzle } from "../contract/drizzle-fixtures";

runDrizzleContract("PGlite (drizzle-orm/pglite)", {
  async open() {
    const db = await connect("memory://");
    return { db, drizzle: drizzle({ client: pgliteOf(db), schema }), close: () => db.destroy() };
  },
  async foreign(kind) {
    if (kind === "bare") {
      const pglite = await PGlite.create();
      return { drizzle: drizzle({ client: pglite, schema }), close: () => pglite.close() };
    }
    const db = await connect("memory://");
    const other = createDurable({ db, workflows: [], secrets: { durable: "t" } });
    await other.migrate();
    return { drizzle: drizzle({ client: pgliteOf(db), schema }), close: () => other.close() };
  },
});

describe("drizzleTx under createTestDurable", () => {
  let ddb: TestDrizzle;
  const placed = defineWorkflow({
    name: "drizzle-placed",
    input: z.object({ amount: z.number() }),
    run: (ctx, input) =>
      drizzleTx(ctx, "place", ddb, async (tx, s) => {
        const [row] = await tx
          .insert(effects)
          .values({ runId: ctx.runId, step: "place", attempt: s.attempt, amount: input.amount })
          .returning();
        return { id: row!.id };
      }),
  });
  let durable: TestDurable;
  beforeAll(async () => {
    durable = await createTestDurable({ workflows: [placed] });
    ddb = drizzle({ client: pgliteOf(durable.db), schema });
    await createEffectTable(ddb);
  });
  afterAll(() => durable?.close());

  it("runs the body on the test instance's PGlite, and mockStep replaces it like any step", async () => {
    const real = await durable.run(placed, { amount: 4 }, { id: "real" });
    expect(real).toMatchObject({ status: "completed", output: { id: 1 } });
    durable.mockStep("place", { result: { id: 99 } });
    const mocked = await durable.run(placed, { amount: 5 }, { id: "mocked" });
    expect(mocked).toMatchObject({ status: "completed", output: { id: 99 } });
    expect(await effectRows(ddb)).toMatchObject([{ runId: "real", amount: 4 }]);
  });

  it("pgliteOf refuses a handle on a server", () => {
    expect(() => pgliteOf({} as AnyKysely)).toThrow(InvalidInputError);
  });
});
