// Dates and durations at their limits on the real server (PostgreSQL 15): the shared suite.
import { connect } from "@/lib/durable/drivers/connect";
import { runDatesContract } from "../contract/dates-contract";
import { createTestDatabase } from "../helpers/databases";

runDatesContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_dates_pg"), { driver: "pg" }),
);
