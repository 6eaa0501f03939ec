import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { connect } from "@/lib/durable/drivers/connect";
import { schema } from "../contract/drizzle-fixtures";
import { runPublishContract } from "../contract/publish-contract";
import { createTestDatabase } from "../helpers/databases";

runPublishContract("PostgreSQL (pg)", async () => {
  const url = await createTestDatabase("durable_publish_pg");
  const db = await connect(url, { driver: "pg" });
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  return {
    db,
    drizzle: drizzle({ client: pool, schema }),
    close: async () => {
      await pool.end();
      await db.destroy();
    },
  };
});
