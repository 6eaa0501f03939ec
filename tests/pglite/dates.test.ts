import { connect } from "@/lib/durable/drivers/connect";
import { runDatesContract } from "../contract/dates-contract";

runDatesContract("PGlite", () => connect("memory://"));
