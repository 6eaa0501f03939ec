import { connect } from "@/lib/durable/drivers/connect";
import { runWebhooksContract } from "../contract/webhooks-contract";

runWebhooksContract("PGlite", () => connect("memory://"));
