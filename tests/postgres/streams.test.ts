import { connect } from "@/lib/durable/drivers/connect";
import { runStreamsContract } from "../contract/streams-contract";
import { createTestDatabase } from "../helpers/databases";

runStreamsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_streams_pg"), { driver: "pg" }),
);
