import { connect } from "@/lib/durable/drivers/connect";
import { runScaleContract } from "../contract/scale-contract";
import { createTestDatabase } from "../helpers/databases";

runScaleContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_scale_pg"), { driver: "pg" }),
);
