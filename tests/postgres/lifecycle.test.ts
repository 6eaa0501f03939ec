import { connect } from "@/lib/durable/drivers/connect";
import { runLifecycleContract } from "../contract/lifecycle-contract";
import { createTestDatabase } from "../helpers/databases";

runLifecycleContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_lifecycle_pg"), { driver: "pg" }),
);
