// Worker mode for hosts that run long (a container, a VM, a server beside `next start`):
// `npm run worker` drains the app's due runs continuously and sleeps until one becomes due
// (LISTEN/NOTIFY on Postgres). SIGTERM or SIGINT stops it cleanly: nothing more is claimed, each
// run it holds is given back at its next step, then it exits (docs/guide/scaling-out.md, "Worker mode").
//
// DURABLE_WORKER_CONCURRENCY: runs advanced at once (default 8). DATABASE_URL as for the app.
import { getDurable } from "../app/durable";

const concurrency = Number(process.env.DURABLE_WORKER_CONCURRENCY ?? 8);
const stop = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    console.log(`[worker] ${signal}: giving back the runs in hand, then exiting`);
    stop.abort();
  });
}

const durable = await getDurable();
console.log(`[worker] draining with concurrency ${concurrency}`);
const report = await durable.work({ concurrency, signal: stop.signal });
console.log(`[worker] stopped: ${JSON.stringify(report)}`);
await durable.close();
