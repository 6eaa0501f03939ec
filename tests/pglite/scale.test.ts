import { connect } from "@/lib/durable/drivers/connect";
import { runScaleContract } from "../contract/scale-contract";

runScaleContract("PGlite", () => connect("memory://"));
