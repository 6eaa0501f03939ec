import { connect } from "@/lib/durable/drivers/connect";
import { runToolApprovalsInboxContract } from "../contract/tool-approvals-inbox-contract";
import { createTestDatabase } from "../helpers/databases";

// Each racing decider on its own pool: the decisions race on the server, under the run's row lock.
runToolApprovalsInboxContract("PostgreSQL (pg)", async () => {
  const url = await createTestDatabase("durable_tool_approvals_pg");
  return { db: await connect(url, { driver: "pg" }), another: () => connect(url, { driver: "pg" }) };
});
