import { connect } from "@/lib/durable/drivers/connect";
import { runWaitForEventContract } from "../contract/wait-for-event-contract";
import { createTestDatabase } from "../helpers/databases";

runWaitForEventContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_wait_event_pg"), { driver: "pg" }),
);
