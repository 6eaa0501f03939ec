import { connect } from "@/lib/durable/drivers/connect";
import { runWaitsContract } from "../contract/waits-contract";
import { createTestDatabase } from "../helpers/databases";

runWaitsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_waits_pg"), { driver: "pg" }),
);
