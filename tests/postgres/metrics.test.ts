import { connect } from "@/lib/durable/drivers/connect";
import { runMetricsContract } from "../contract/metrics-contract";
import { createTestDatabase } from "../helpers/databases";

runMetricsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_metrics_pg"), { driver: "pg" }),
);
