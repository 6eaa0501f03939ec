import { connect } from "@/lib/durable/drivers/connect";
import { runApprovalsContract } from "../contract/approvals-contract";

runApprovalsContract("PGlite", () => connect("memory://"));
