import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { payloadText, runEncryptionContract, TEST_KEYS } from "../contract/encryption-contract";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

runEncryptionContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_encryption_pg"), { driver: "pg" }),
);

// Each step fails once and is retried in process: its row goes from waiting (with the error) to
// completed (without), the write a stale rewrite would undo.
const failOnce = defineWorkflow({
  name: "enc-fail-once",
  input: z.object({ steps: z.number() }),
  async run(ctx, input) {
    let sum = 0;
    for (let i = 0; i < input.steps; i++) {
      sum += await ctx.step.run(
        `s${i}`,
        (s) => {
          if (s.attempt === 1) throw new Error(`secret failure ${i}`);
          return i;
        },
        { retries: 1, retryDelay: "5ms" },
      );
    }
    return sum;
  },
});

describe("reencrypt beside a running owner on PostgreSQL (pg)", () => {
  let owner: Durable;
  let rotator: Durable;
  beforeAll(async () => {
    const url = await createTestDatabase("durable_encryption_owner");
    const workflows = [failOnce];
    const defaults = { lease: "2s" };
    owner = createDurable({
      db: await connect(url, { driver: "pg" }),
      workflows,
      defaults,
      // The first step of a rotation: k2 opens everywhere before any instance seals with it.
      encryption: { keys: [TEST_KEYS.k1, { ...TEST_KEYS.k2, decryptOnly: true }] },
    });
    await owner.migrate();
    rotator = createDurable({
      db: await connect(url, { driver: "pg" }),
      workflows,
      defaults,
      encryption: { keys: [TEST_KEYS.k2, { ...TEST_KEYS.k1, decryptOnly: true }] },
    });
  });
  afterAll(async () => {
    await owner?.close();
    await rotator?.close();
  });

  it("never overwrites a receipt written after its batch read the row", async () => {
    const runs = 6;
    const steps = 12;
    await owner.startMany(
      failOnce,
      Array.from({ length: runs }, () => ({ steps })),
      {
        ids: Array.from({ length: runs }, (_, n) => `o${n}`),
      },
    );
    let done = false;
    let passes = 0;
    const ticking = (async () => {
      while (!done) await owner.tick({ budgetMs: 20_000, concurrency: 3 });
    })();
    const rotating = (async () => {
      while (!done) {
        await rotator.reencrypt({}, { batchSize: 1 });
        passes++;
      }
    })();
    try {
      await until(async () => (await owner.list({ status: "completed" })).runs.length === runs, 60_000);
    } finally {
      done = true;
      await Promise.all([ticking, rotating]);
    }
    expect(passes).toBeGreaterThan(1);
    const expected = (steps * (steps - 1)) / 2;
    for (let n = 0; n < runs; n++) expect((await rotator.status(`o${n}`))?.output).toBe(expected);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from durable_steps where status = 'completed' and error <> 'null'::jsonb`.execute(
      rotator.db,
    );
    expect(rows[0]!.n).toBe(0);
    const { rows: attempts } = await sql<{ n: number }>`
      select count(*)::int as n from durable_steps where attempt = 2`.execute(rotator.db);
    expect(attempts[0]!.n).toBe(runs * steps);
    // The owner wrote under k1 all along; a last pass moves what it wrote after the others.
    await rotator.reencrypt();
    expect(await payloadText(rotator.db)).not.toContain("$denc1.k1.");
    expect(await payloadText(rotator.db)).not.toContain("secret failure");
  }, 90_000);
});
