// The claim under flow control on the real server: the shared suite. Racing claimers:
// tests/postgres/flow-control-racing.test.ts.
import { connect } from "@/lib/durable/drivers/connect";
import { runFlowControlContract } from "../contract/flow-control-contract";
import { createTestDatabase } from "../helpers/databases";

runFlowControlContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_flow_control_pg"), { driver: "pg" }),
);
