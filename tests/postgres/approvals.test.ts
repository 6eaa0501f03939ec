import { connect } from "@/lib/durable/drivers/connect";
import { runApprovalsContract } from "../contract/approvals-contract";
import { createTestDatabase } from "../helpers/databases";

runApprovalsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_approvals_pg"), { driver: "pg" }),
);
