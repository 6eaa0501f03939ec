// The bulk filter's suite on the real server: jsonb containment, the text[] tag match and the
// keyset as PostgreSQL answers them, not only PGlite.
import { connect } from "@/lib/durable/drivers/connect";
import { runBulkFilterContract } from "../contract/bulk-filter-contract";
import { createTestDatabase } from "../helpers/databases";

runBulkFilterContract(
  "PostgreSQL (pg)",
  async () => connect(await createTestDatabase("durable_bulk_filter"), { driver: "pg" }),
  100,
);
