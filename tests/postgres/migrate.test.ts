import { sql } from "kysely";
import { expect, it } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { migrate } from "@/lib/durable/store/migrate";
import { createTestDatabase } from "../helpers/databases";

it("two cold starts migrating the same fresh database at once both succeed, and it is applied once", async () => {
  for (let round = 0; round < 3; round++) {
    const url = await createTestDatabase("durable_migrate_race");
    const a = await connect(url, { driver: "pg", poolSize: 1 });
    const b = await connect(url, { driver: "pg", poolSize: 1 });
    try {
      const results = await Promise.all([migrate(a), migrate(b)]);
      expect(results.map((r) => r.length).sort()).toEqual([0, 1]);
      expect(await migrate(a)).toEqual([]);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from durable_migrations`.execute(a);
      expect(rows[0]!.n).toBe(1);
      const fn = await sql<{ now: Date }>`select durable_now() as now`.execute(b);
      expect(fn.rows[0]!.now).toBeInstanceOf(Date);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  }
});
