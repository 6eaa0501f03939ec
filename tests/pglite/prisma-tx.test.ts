// prismaTx over pglite-prisma-adapter, on the embedded database's one session (pgliteOf), and
// under createTestDurable.
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, connect, createDurable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { pgliteOf, prismaTx } from "@/lib/durable/prisma";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";
import { runPrismaContract } from "../contract/prisma-contract";
import { createEffectTable, effectRows } from "../contract/prisma-fixtures";
import { until } from "../helpers/until";
import { PrismaClient } from "../fixtures/prisma/generated/client";

/** The test client's transaction timeout and wait for a connection. */
const CLIENT_TIMEOUT_MS = 100;
const onPGlite = (pglite: PGlite) => new PrismaClient({ adapter: new PrismaPGlite(pglite) });
/** Disconnects the client, then closes what it runs on. */
const closing = (prisma: PrismaClient, close: () => Promise<void>) => async () => {
  await prisma.$disconnect();
  await close();
};

runPrismaContract("PGlite (pglite-prisma-adapter)", {
  async open() {
    const db = await connect("memory://");
    const prisma = onPGlite(pgliteOf(db));
    return { db, prisma, close: closing(prisma, () => db.destroy()) };
  },
  async foreign(kind) {
    if (kind === "bare") {
      const pglite = await PGlite.create();
      const prisma = onPGlite(pglite);
      return { prisma, close: closing(prisma, () => pglite.close()) };
    }
    const db = await connect("memory://");
    const other = createDurable({ db, workflows: [], secrets: { durable: "t" } });
    await other.migrate();
    const prisma = onPGlite(pgliteOf(db));
    return { prisma, close: closing(prisma, () => other.close()) };
  },
});

describe("prismaTx under createTestDurable", () => {
  let prisma: PrismaClient;
  const placed = defineWorkflow({
    name: "prisma-placed",
    input: z.object({ amount: z.number() }),
    run: (ctx, input) =>
      prismaTx(ctx, "place", prisma, async (tx, s) => {
        const row = await tx.effect.create({
          data: { runId: ctx.runId, step: "place", attempt: s.attempt, amount: input.amount },
        });
        return { id: row.id };
      }),
  });
  let short: PrismaClient;
  const slow = defineWorkflow({
    name: "prisma-slow",
    input: z.object({}),
    run: (ctx) =>
      prismaTx(ctx, "slow", short, async (tx, s) => {
        // The body outlasts the client's transaction timeout four times over before it writes.
        const started = performance.now();
        await until(() => performance.now() - started > 4 * CLIENT_TIMEOUT_MS);
        const row = await tx.effect.create({ data: { runId: ctx.runId, step: "slow", attempt: s.attempt, amount: 1 } });
        return { id: row.id, ranMs: performance.now() - started };
      }),
  });
  let durable: TestDurable;
  beforeAll(async () => {
    durable = await createTestDurable({ workflows: [placed, slow] });
    prisma = onPGlite(pgliteOf(durable.db));
    short = new PrismaClient({
      adapter: new PrismaPGlite(pgliteOf(durable.db)),
      transactionOptions: { timeout: CLIENT_TIMEOUT_MS, maxWait: CLIENT_TIMEOUT_MS },
    });
    await createEffectTable(prisma);
  });
  afterAll(async () => {
    await short?.$disconnect();
    await prisma?.$disconnect();
    await durable?.close();
  });

  it("runs the body on the test instance's PGlite, and mockStep replaces it like any step", async () => {
    const real = await durable.run(placed, { amount: 4 }, { id: "real" });
    expect(real).toMatchObject({ status: "completed", output: { id: 1 } });
    durable.mockStep("place", { result: { id: 99 } });
    const mocked = await durable.run(placed, { amount: 5 }, { id: "mocked" });
    expect(mocked).toMatchObject({ status: "completed", output: { id: 99 } });
    expect(await effectRows(prisma)).toMatchObject([{ runId: "real", amount: 4 }]);
  });

  it("gives Prisma's transaction the invocation's budget, not the client's (or Prisma's 5 s) timeout", async () => {
    // The client's transactions time out after 100 ms; the body runs past 400 ms and still commits.
    const done = await durable.run(slow, {}, { id: "slow" });
    expect(done).toMatchObject({ status: "completed", output: { id: expect.any(Number) } });
    expect((done.output as { ranMs: number }).ranMs).toBeGreaterThan(4 * CLIENT_TIMEOUT_MS);
    expect(await effectRows(prisma)).toMatchObject([{ runId: "real" }, { runId: "slow", step: "slow" }]);
  });

  it("refuses a ctx that is not a workflow's, a client that is not Prisma's, and a handle on a server", async () => {
    await expect(prismaTx({} as never, "x", prisma, async () => 1)).rejects.toThrow(InvalidInputError);
    const wrong = defineWorkflow({
      name: "prisma-wrong-client",
      input: z.object({}),
      run: (ctx) => prismaTx(ctx, "x", {} as PrismaClient, async () => 1),
    });
    const other = await createTestDurable({ workflows: [wrong] });
    try {
      const failed = await other.run(wrong, {}, { id: "wrong" });
      expect(failed).toMatchObject({ status: "failed", error: { code: "invalid_input" } });
      expect(failed.error?.message).toContain("prisma must be a Prisma client");
    } finally {
      await other.close();
    }
    expect(() => pgliteOf({} as AnyKysely)).toThrow(InvalidInputError);
  });
});
