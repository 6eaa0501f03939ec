import { connect } from "@/lib/durable/drivers/connect";
import { runBulkFilterContract } from "../contract/bulk-filter-contract";

runBulkFilterContract("PGlite", () => connect("memory://"), 100);
