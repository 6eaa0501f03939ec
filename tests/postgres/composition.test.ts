import { connect } from "@/lib/durable/drivers/connect";
import { runCompositionContract } from "../contract/composition-contract";
import { createTestDatabase } from "../helpers/databases";

runCompositionContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_composition_pg"), { driver: "pg" }),
);
