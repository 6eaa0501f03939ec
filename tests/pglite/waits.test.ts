import { connect } from "@/lib/durable/drivers/connect";
import { runWaitsContract } from "../contract/waits-contract";

runWaitsContract("PGlite", () => connect("memory://"));
