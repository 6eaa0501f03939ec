import { connect } from "@/lib/durable/drivers/connect";
import { runPatchingContract } from "../contract/patching-contract";
import { createTestDatabase } from "../helpers/databases";

runPatchingContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_patching_pg"), { driver: "pg" }),
);
