import { connect } from "@/lib/durable/drivers/connect";
import { runWaitForEventContract } from "../contract/wait-for-event-contract";

runWaitForEventContract("PGlite", () => connect("memory://"));
