import { connect } from "@/lib/durable/drivers/connect";
import { runCompositionContract } from "../contract/composition-contract";

runCompositionContract("PGlite", () => connect("memory://"));
