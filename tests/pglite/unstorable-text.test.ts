import { connect } from "@/lib/durable/drivers/connect";
import { runUnstorableTextContract } from "../contract/unstorable-text-contract";

runUnstorableTextContract("PGlite", () => connect("memory://"));
