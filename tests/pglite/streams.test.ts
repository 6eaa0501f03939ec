import { connect } from "@/lib/durable/drivers/connect";
import { runStreamsContract } from "../contract/streams-contract";

runStreamsContract("PGlite", () => connect("memory://"));
