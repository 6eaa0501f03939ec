// The chaos harness's drain (scripts/chaos/drain.ts) tells a slow drain from a stuck run: runs that keep
// moving (steps recorded, runs finished) are drained however long that takes, and runs nothing can finish are
// reported once nothing has moved for the stall time. Scenario 8 on a loaded machine was cut off by a fixed
// 90 s limit while its last runs were still being claimed and finished (docs/invariants.md, "The harness").
import { sql, type Kysely } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow } from "@/lib/durable";
import { drain } from "@/scripts/chaos/drain";
import { createChaosDatabase } from "@/scripts/chaos/harness-db";
import { chaosOrder } from "@/scripts/chaos/workflow";

const open: Kysely<any>[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.destroy()));
});

// A workflow the drain does not register: its runs stay due, and nothing finishes them.
const foreign = defineWorkflow({ name: "not-a-chaos-workflow", input: z.object({}), run: async () => 1 });

const statuses = async (db: Kysely<any>) =>
  (
    await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from durable_runs group by status order by status`.execute(db)
  ).rows;

describe("the chaos drain", () => {
  it("drains runs that keep moving past the stall time, and reports none of them", async () => {
    const { url, db } = await createChaosDatabase("durable_chaos_drain_slow");
    open.push(db);
    const durable = createDurable({ db, workflows: [chaosOrder], secrets: { durable: "t" }, log: () => {} });
    // 60 runs of two timed steps each: with 1.5 s budgets each takes two invocations (the second step does
    // not fit after the first), about 9 s for six loops in all, far over the 4 s stall time.
    for (let i = 0; i < 60; i++) await durable.start(chaosOrder, { work: [400, 300] }, { id: `slow-${i}` });
    const started = performance.now();
    expect(await drain(url, db, 1_500, 4_000)).toEqual([]);
    expect(performance.now() - started).toBeGreaterThan(4_000);
    expect(await statuses(db)).toEqual([{ status: "completed", n: 60 }]);
  }, 180_000); // about 10 s alone; a loaded machine stretches it, which is what the drain must allow

  it("reports a run that nothing finishes once nothing finished or was recorded for the stall time", async () => {
    const { url, db } = await createChaosDatabase("durable_chaos_drain_stuck");
    open.push(db);
    const durable = createDurable({ db, workflows: [foreign], secrets: { durable: "t" }, log: () => {} });
    await durable.start(foreign, {}, { id: "stuck" });
    expect(await drain(url, db, 1_500, 1_000)).toEqual([
      expect.stringMatching(/^1 runs unfinished: nothing finished or recorded in the last 1 s of draining/),
    ]);
    expect(await statuses(db)).toEqual([{ status: "pending", n: 1 }]);
  }, 60_000);
});
