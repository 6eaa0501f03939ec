// `npm run dev`: `next dev` (PGlite in .durable/, migrated on first use) plus a local stand-in for
// Vercel Cron that calls every cron path of vercel.json with the cron bearer every few seconds,
// so runs move with no setup at all. Extra arguments go to `next dev`.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const crons = JSON.parse(readFileSync(path.join(root, "vercel.json"), "utf8")).crons ?? [];
const intervalMs = Number(process.env.DURABLE_DEV_CRON_MS ?? 5000);
// The server and this loop must agree on the bearer: hand the server the one we send. Unset, it
// is the development fallback of lib/durable/secrets.ts.
const cronSecret = process.env.CRON_SECRET || "dev-cron-secret";
const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");

const child = spawn(process.execPath, [nextBin, "dev", ...process.argv.slice(2)], {
  cwd: root,
  env: { ...process.env, CRON_SECRET: cronSecret },
  stdio: ["inherit", "pipe", "inherit"],
});

// Learn the address from next's banner: it moves to another port when 3000 is taken.
let origin = `http://localhost:${process.env.PORT ?? 3000}`;
child.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  const found = /https?:\/\/(?:localhost|127\.0\.0\.1|\[::1\]):\d+/.exec(chunk.toString());
  if (found) origin = found[0];
});

let stopping = false;
const log = (message) => console.log(`\x1b[36m[cron]\x1b[0m ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

async function callCrons() {
  let announced = false;
  while (!stopping) {
    await sleep(intervalMs);
    for (const { path: cronPath } of crons) {
      if (stopping) return;
      try {
        const response = await fetch(new URL(cronPath, origin), {
          headers: { authorization: `Bearer ${cronSecret}`, "user-agent": "vercel-cron/1.0 (local dev)" },
          signal: AbortSignal.timeout(120_000),
        });
        const text = await response.text();
        if (!response.ok) {
          log(`${cronPath} → ${response.status} ${text.slice(0, 300)}`);
          continue;
        }
        if (!announced) log(`calling ${cronPath} every ${intervalMs / 1000}s (${origin})`);
        announced = true;
        const report = JSON.parse(text);
        if (report.claimed > 0) log(`${cronPath} → ${text}`);
      } catch {
        // The server is still starting or compiling the route: try again next round.
      }
    }
  }
}

function stop(signal) {
  stopping = true;
  if (child.exitCode === null) child.kill(signal);
}
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("exit", () => stop("SIGTERM"));
child.on("exit", (code, signal) => {
  stopping = true;
  process.exit(code ?? (signal ? 0 : 1));
});

void callCrons();
