import { connect } from "@/lib/durable/drivers/connect";
import { runVersionsContract } from "../contract/versions-contract";

runVersionsContract("PGlite", () => connect("memory://"));
