import { connect } from "@/lib/durable/drivers/connect";
import { runContinueAsNewContract } from "../contract/continue-as-new-contract";
import { createTestDatabase } from "../helpers/databases";

runContinueAsNewContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_continue_pg"), { driver: "pg" }),
);
