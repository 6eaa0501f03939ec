import { connect } from "@/lib/durable/db";
import { runWaitsContract } from "../contract/waits-contract";

runWaitsContract("PGlite", () => connect("memory://"));
