import { connect } from "@/lib/durable/drivers/connect";
import { runMcpContract } from "../contract/mcp-contract";
import { createTestDatabase } from "../helpers/databases";

runMcpContract("PostgreSQL (pg)", async () => connect(await createTestDatabase("durable_mcp_pg"), { driver: "pg" }));
