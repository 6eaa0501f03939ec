import { connect } from "@/lib/durable/drivers/connect";
import { runLifecycleContract } from "../contract/lifecycle-contract";

runLifecycleContract("PGlite", () => connect("memory://"));
