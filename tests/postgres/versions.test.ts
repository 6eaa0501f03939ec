import { connect } from "@/lib/durable/drivers/connect";
import { runVersionsContract } from "../contract/versions-contract";
import { createTestDatabase } from "../helpers/databases";

runVersionsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_versions_pg"), { driver: "pg" }),
);
