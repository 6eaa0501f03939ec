import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createDurable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { COUNT_CAP, countLabel, countRuns } from "../../app/runs/counts";
import { runRetentionContract, seedFinished } from "../contract/retention-contract";

runRetentionContract("PGlite", () => connect("memory://"));

describe("the dashboard's counts (PGlite)", () => {
  it("counts each status exactly up to the cap, and says 10,000+ past it", async () => {
    const db = await connect("memory://");
    const durable = createDurable({ db, workflows: [] });
    try {
      await durable.migrate();
      expect(await countRuns(db)).toEqual({
        all: 0,
        pending: 0,
        running: 0,
        waiting: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
      });
      await seedFinished(db, "many", COUNT_CAP + 5);
      await sql`update durable_runs set status = 'failed' where id in ('many-1', 'many-2')`.execute(db);
      await sql`insert into durable_runs (id, workflow, input, wake_at) values ('due', 'chatty', '{}', now())`.execute(
        db,
      );
      const counts = await countRuns(db);
      expect(counts).toMatchObject({ pending: 1, failed: 2, completed: COUNT_CAP + 1, waiting: 0 });
      expect(countLabel(counts, "completed")).toBe("10,000+");
      expect(countLabel(counts, "all")).toBe("10,000+");
      expect(countLabel(counts, "failed")).toBe("2");
      expect(countLabel(counts, "waiting")).toBe("0");
      await sql`delete from durable_runs where status = 'completed' and id <> 'many-3'`.execute(db);
      const few = await countRuns(db);
      expect([countLabel(few, "all"), countLabel(few, "completed")]).toEqual(["4", "1"]);
    } finally {
      await durable.close();
    }
  });
});
