import { connect } from "@/lib/durable/drivers/connect";
import { runMetricsContract } from "../contract/metrics-contract";

runMetricsContract("PGlite", () => connect("memory://"));
