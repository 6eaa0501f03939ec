import { connect } from "@/lib/durable/drivers/connect";
import { runMcpContract } from "../contract/mcp-contract";

runMcpContract("PGlite", () => connect("memory://"));
