import { connect } from "@/lib/durable/drivers/connect";
import { runContinueAsNewContract } from "../contract/continue-as-new-contract";

runContinueAsNewContract("PGlite", () => connect("memory://"));
