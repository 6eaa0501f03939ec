import { connect } from "@/lib/durable/db";
import { runEngineContract } from "../contract/engine-contract";

runEngineContract("PGlite", () => connect("memory://"));
