// prismaTx on the real server: Prisma 7 over @prisma/adapter-pg, and over Neon's adapter
// (@prisma/adapter-neon, its Pool) reaching the server through a WebSocket proxy. Each side is a
// store handle and a Prisma client with pools of their own, as in an app.
import { spawn } from "node:child_process";
import { afterAll } from "vitest";
import { connect, createDurable } from "@/lib/durable";
import { type PrismaSide, runPrismaContract } from "../contract/prisma-contract";
import { type PrismaDriver, prismaOn } from "../contract/prisma-fixtures";
import { createTestDatabase } from "../helpers/databases";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
afterAll(async () => {
  await proxy?.close();
});

async function sideOn(driver: PrismaDriver, url: string): Promise<PrismaSide> {
  const db = await connect(url, { driver, poolSize: 4 });
  const prisma = prismaOn(driver, url);
  return {
    db,
    prisma,
    close: async () => {
      await prisma.$disconnect();
      await db.destroy();
    },
  };
}

/** Starts a worker on `url`, waits until it reached `point`, SIGKILLs it (or sees the failpoint do it). */
function killWorker(driver: PrismaDriver, url: string, point: "inside-tx" | "tx.after-receipt"): Promise<void> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, WORKER_DATABASE_URL: url, WORKER_DRIVER: driver };
    if (proxy) env.NEON_PROXY_PORT = String(proxy.port);
    if (point === "inside-tx") env.KILL_POINT = point;
    else env.DURABLE_FAILPOINT = `${point}:kill`;
    const child = spawn(process.execPath, ["--import", "tsx", "tests/postgres/fixtures/prisma-kill-worker.ts"], {
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
  const label = driver === "pg" ? "PostgreSQL (@prisma/adapter-pg)" : "PostgreSQL (@prisma/adapter-neon)";
  let url: string;
  runPrismaContract(label, {
    async open() {
      if (driver === "neon") {
        proxy ??= await startNeonProxy();
        configureNeonForLocalProxy(proxy.port);
      }
      url = await createTestDatabase(`durable_prisma_${driver}`);
      return sideOn(driver, url);
    },
    async foreign(kind) {
      const other = await createTestDatabase(`durable_prisma_${driver}_${kind}`);
      if (kind === "migrated") {
        const durable = createDurable({
          db: await connect(other, { driver }),
          workflows: [],
          secrets: { durable: "t" },
        });
        await durable.migrate();
        await durable.close();
      }
      const prisma = prismaOn(driver, other);
      return { prisma, close: () => prisma.$disconnect() };
    },
    another: () => sideOn(driver, url),
    killWorkerAt: (point) => killWorker(driver, url, point),
  });
}
