import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { runMetricsContract } from "../contract/metrics-contract";
import { createTestDatabase } from "../helpers/databases";

runMetricsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_metrics_pg"), { driver: "pg" }),
);

describe("a scrape on PostgreSQL beside writers", () => {
  it("never waits for a row another transaction holds: a claim's or a cancel's lock", async () => {
    const job = defineWorkflow({ name: "job", input: z.object({}), run: async () => 1 });
    const url = await createTestDatabase("durable_metrics_locks");
    const durable = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [job], log: () => {} });
    const holder = await connect(url, { driver: "pg", poolSize: 1 });
    try {
      await durable.migrate();
      await durable.start(job, {}, { id: "held" });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holding = holder.transaction().execute(async (tx) => {
        await sql`select 1 from durable_runs where id = 'held' for update`.execute(tx);
        await sql`update durable_runs set status = 'running', lease_until = durable_now() where id = 'held'`.execute(
          tx,
        );
        locked();
        await released;
      });
      await isLocked;
      // Answered while the lock is held, from the last committed state: the run still pending.
      const read = await durable.metrics();
      expect(read.runs).toEqual([{ workflow: "job", status: "pending", count: 1 }]);
      release();
      await holding;
      expect((await durable.metrics()).runs).toEqual([{ workflow: "job", status: "running", count: 1 }]);
    } finally {
      await holder.destroy();
      await durable.close();
    }
  });
});
