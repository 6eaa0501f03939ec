// A worker process (a fixture script under tests/postgres/fixtures) that advances one run with a
// failpoint armed to SIGKILL it there (lib/durable/engine/run/failpoints.ts).
import { spawn } from "node:child_process";
import type { FailpointName } from "@/lib/durable/engine/run/failpoints";

/**
 * Runs `fixture` on database `url` to advance `runId`, armed at `point`; resolves once the process
 * died of SIGKILL after printing that it reached the failpoint, rejects otherwise.
 */
export function killWorkerAt(fixture: string, url: string, runId: string, point: FailpointName): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", fixture], {
      env: { ...process.env, WORKER_DATABASE_URL: url, RUN_ID: runId, DURABLE_FAILPOINT: `${point}:kill` },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.on("exit", (_code, signal) => {
      if (signal === "SIGKILL" && output.includes(`FAILPOINT ${point}`)) resolve();
      else reject(new Error(`worker for ${runId} was not killed at ${point}: ${output}`));
    });
  });
}
