import { connect } from "@/lib/durable/drivers/connect";
import { runEngineContract } from "../contract/engine-contract";
import { createTestDatabase } from "../helpers/databases";

runEngineContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_contract_pg"), { driver: "pg" }),
);
