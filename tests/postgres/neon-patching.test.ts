import { afterAll } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { runPatchingContract } from "../contract/patching-contract";
import { createTestDatabase } from "../helpers/databases";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

// The patching contract through Neon's driver (Postgres over WebSocket) and the local proxy.
let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
afterAll(async () => {
  await proxy?.close();
});

runPatchingContract("PostgreSQL through Neon's driver", async () => {
  proxy = await startNeonProxy();
  configureNeonForLocalProxy(proxy.port);
  return connect(await createTestDatabase("durable_patching_neon"), { driver: "neon" });
});
