import { connect } from "@/lib/durable/drivers/connect";
import { runFlowControlContract } from "../contract/flow-control-contract";

runFlowControlContract("PGlite", () => connect("memory://"));
