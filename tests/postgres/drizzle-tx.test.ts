// drizzleTx on the real server: Drizzle's node-postgres driver over a pg Pool, and its Neon
// serverless driver over Neon's Pool reaching the server through a WebSocket proxy. Each side is
// a store handle and a Drizzle db with pools of their own, as in an app.
import { spawn } from "node:child_process";
import { Pool as NeonPool } from "@neondatabase/serverless";
import { drizzle as drizzleNeon } from "drizzle-orm/neon-serverless";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll } from "vitest";
import { connect, createDurable } from "@/lib/durable";
import { type DrizzleSide, runDrizzleContract } from "../contract/drizzle-contract";
import { schema, type TestDrizzle } from "../contract/drizzle-fixtures";
import { createTestDatabase } from "../helpers/databases";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

type Driver = "pg" | "neon";
let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
afterAll(async () => {
  await proxy?.close();
});

/** A Drizzle db over `driver` on `url`, and how to close its pool. */
function drizzleOn(driver: Driver, url: string): { drizzle: TestDrizzle; close(): Promise<void> } {
  if (driver === "neon") {
    const pool = new NeonPool({ connectionString: url, max: 4 });
    return { drizzle: drizzleNeon({ client: pool, schema }), close: () => pool.end() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  return { drizzle: drizzlePg({ client: pool, schema }), close: () => pool.end() };
}

async function sideOn(driver: Driver, url: string): Promise<DrizzleSide> {
  const db = await connect(url, { driver, poolSize: 4 });
  const { drizzle, close } = drizzleOn(driver, url);
  return {
    db,
    drizzle,
    close: async () => {
      await close();
      await db.destroy();
    },
  };
}

/** Starts a worker on `url`, waits until it reached `point`, SIGKILLs it (or sees the failpoint do it). */
function killWorker(driver: Driver, url: string, point: "inside-tx" | "tx.after-receipt"): Promise<void> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, WORKER_DATABASE_URL: url, WORKER_DRIVER: driver };
    if (proxy) env.NEON_PROXY_PORT = String(proxy.port);
    if (point === "inside-tx") env.KILL_POINT = point;
    else env.DURABLE_FAILPOINT = `${point}:kill`;
    const child = spawn(process.execPath, ["--import", "tsx", "tests/postgres/fixtures/drizzle-kill-worker.ts"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    const timer = setTimeout(() => reject(new Error(`worker never reached ${point}: ${output}`)), 30_000);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("AT:inside-tx")) child.kill("SIGKILL");
    });
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      const reached = output.includes(point === "inside-tx" ? "AT:inside-tx" : `FAILPOINT ${point}`);
      signal === "SIGKILL" && reached ? resolve() : reject(new Error(`worker was not killed at ${point}: ${output}`));
    });
  });
}

for (const driver of ["pg", "neon"] as const) {
  const label = driver === "pg" ? "PostgreSQL (drizzle-orm/node-postgres)" : "PostgreSQL (drizzle-orm/neon-serverless)";
  let url: string;
  runDrizzleContract(label, {
    async open() {
      if (driver === "neon") {
        proxy ??= await startNeonProxy();
        configureNeonForLocalProxy(proxy.port);
      }
      url = await createTestDatabase(`durable_drizzle_${driver}`);
      return sideOn(driver, url);
    },
    async foreign(kind) {
      const other = await createTestDatabase(`durable_drizzle_${driver}_${kind}`);
      if (kind === "migrated") {
        const durable = createDurable({
          db: await connect(other, { driver }),
          workflows: [],
          secrets: { durable: "t" },
        });
        await durable.migrate();
        await durable.close();
      }
      return drizzleOn(driver, other);
    },
    another: () => sideOn(driver, url),
    killWorkerAt: (point) => killWorker(driver, url, point),
  });
}
