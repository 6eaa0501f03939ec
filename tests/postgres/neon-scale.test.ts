import { afterAll } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { runScaleContract } from "../contract/scale-contract";
import { createTestDatabase } from "../helpers/databases";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

// Scaling out on the real Neon driver: the worker LISTENs over Neon's WebSocket client too.
let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
afterAll(async () => {
  await proxy?.close();
});

runScaleContract("PostgreSQL through Neon's driver", async () => {
  proxy = await startNeonProxy();
  configureNeonForLocalProxy(proxy.port);
  return connect(await createTestDatabase("durable_scale_neon"), { driver: "neon" });
});
