import { connect } from "@/lib/durable/drivers/connect";
import { runWebhooksContract } from "../contract/webhooks-contract";
import { createTestDatabase } from "../helpers/databases";

runWebhooksContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_webhooks_pg"), { driver: "pg" }),
);
