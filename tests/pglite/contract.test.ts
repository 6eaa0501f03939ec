import { connect } from "@/lib/durable/drivers/connect";
import { runEngineContract } from "../contract/engine-contract";

runEngineContract("PGlite", () => connect("memory://"));
