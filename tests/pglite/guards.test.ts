import { connect } from "@/lib/durable/drivers/connect";
import { runGuardsContract } from "../contract/guards-contract";

runGuardsContract("PGlite", () => connect("memory://"));
