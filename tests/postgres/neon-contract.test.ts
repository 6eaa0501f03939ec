import { afterAll } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { runEngineContract } from "../contract/engine-contract";
import { createTestDatabase } from "../helpers/databases";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

// The real Neon driver (Postgres over WebSocket) reaching the local server through a proxy.
let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
afterAll(async () => {
  await proxy?.close();
});

runEngineContract("PostgreSQL through Neon's driver", async () => {
  proxy = await startNeonProxy();
  configureNeonForLocalProxy(proxy.port);
  return connect(await createTestDatabase("durable_contract_neon"), { driver: "neon" });
});
