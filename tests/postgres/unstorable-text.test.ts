import { connect } from "@/lib/durable/drivers/connect";
import { runUnstorableTextContract } from "../contract/unstorable-text-contract";
import { createTestDatabase } from "../helpers/databases";

runUnstorableTextContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_unstorable_pg"), { driver: "pg" }),
);
