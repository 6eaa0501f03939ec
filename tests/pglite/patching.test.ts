import { connect } from "@/lib/durable/drivers/connect";
import { runPatchingContract } from "../contract/patching-contract";

runPatchingContract("PGlite", () => connect("memory://"));
