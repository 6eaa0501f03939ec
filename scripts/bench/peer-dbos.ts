// DBOS Transact in the peers section (scripts/bench/peers.ts, docs/performance.md "Peers"): a job is
// a workflow of 3 steps (DBOS.runStep), each inserting its receipt as its own statement and commit,
// as the other peers' handlers do; DBOS checkpoints each step's outcome in its system database (here
// the drain's own database, schema `dbos`). One configuration, its queue: the jobs are enqueued on a
// database-backed queue (untimed, through a DBOSClient), then one launched DBOS process drains it
// with `workerConcurrency` = loops. Its queue is what its docs give for running many workflows with
// bounded concurrency, and the only way it drains a backlog enqueued beforehand (a direct
// `startWorkflow` is the enqueue and the run at once). A queue is polled, not woken: the default
// `minPollingIntervalMs` of 1 s holds a worker to `workerConcurrency` workflows a second, so the
// bench sets that documented knob to DBOS_POLL_MS, 1 ms: the fastest (300 jobs, 1 lane: 60 runs/s at
// 1 ms, 39 at 5 ms, 16 at 20 ms; 10 lanes: 142, 140, 85), and no dearer in server CPU a run.
import { DBOS, DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import {
  type Contender,
  countOf,
  enqueueFour,
  INSERT_RECEIPT,
  installedVersion,
  type PeerConfiguration,
  type PeerUrls,
  RECEIPTS,
  thirdReceiptWritten,
} from "./peer-contender";

/** The queue's minPollingIntervalMs (its default is 1,000). */
export const DBOS_POLL_MS = 1;

const APP = "durable-bench";
const APP_VERSION = "bench-1";
const QUEUE = "bench";

/** DBOS's logger (its DLogger): quiet but for errors, as the other peers' are. */
const logger = {
  info: () => {},
  debug: () => {},
  warn: () => {},
  error: (error: unknown) => console.error(`  DBOS: ${(error as Error)?.message ?? error}`),
};

/** The pool the steps insert receipts through: the running contender's (DBOS is one per process). */
let receipts: pg.Pool | null = null;

async function insertReceipt(job: string, step: number): Promise<void> {
  await receipts!.query(INSERT_RECEIPT, [job, step]);
}

async function benchJob(_n: number): Promise<void> {
  const job = DBOS.workflowID!;
  await DBOS.runStep(() => insertReceipt(job, 1), { name: "one" });
  await DBOS.runStep(() => insertReceipt(job, 2), { name: "two" });
  await DBOS.runStep(
    async () => {
      await insertReceipt(job, 3);
      thirdReceiptWritten();
    },
    { name: "three" },
  );
}

const benchWorkflow = DBOS.registerWorkflow(benchJob, { name: "bench" });

function configure(url: string, poolSize: number): void {
  DBOS.setConfig({
    name: APP,
    applicationVersion: APP_VERSION,
    systemDatabaseUrl: url,
    systemDatabasePoolSize: poolSize,
    logger,
  });
}

async function dbosContender(urls: PeerUrls): Promise<Contender> {
  // A launch creates the system tables; the workers' own launch comes with start().
  configure(urls.direct, 4);
  await DBOS.launch();
  await DBOS.shutdown();
  const client = new pg.Client({ connectionString: urls.direct });
  await client.connect();
  await client.query(RECEIPTS);
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', new.workflow_uuid); return null; end $$;
     create trigger bench_done after update of status on dbos.workflow_status
       for each row when (new.status = 'SUCCESS') execute function bench_done();`,
  );
  const enqueuer = await DBOSClient.create({ systemDatabaseUrl: urls.direct, applicationName: APP, logger });
  let launched = false;
  return {
    enqueue: (count) =>
      enqueueFour(client, count, (i) =>
        enqueuer.enqueue(
          { queueName: QUEUE, workflowName: "bench", workflowID: `job-${i}`, appVersion: APP_VERSION },
          i,
        ),
      ),
    async start(loops) {
      await enqueuer.registerQueue(QUEUE, { workerConcurrency: loops, minPollingIntervalMs: DBOS_POLL_MS });
      receipts = new pg.Pool({ connectionString: urls.worker, max: loops + 2 });
      receipts.on("error", (error) => console.error(`  DBOS receipts: ${error.message}`));
      configure(urls.worker, loops + 2);
      await DBOS.launch();
      launched = true;
    },
    async enqueueOne(n) {
      await DBOS.startWorkflow(benchWorkflow, { queueName: QUEUE, workflowID: `one-${n}` })(n);
    },
    remaining: () => countOf(client, "select count(*)::int as n from dbos.workflow_status where status <> 'SUCCESS'"),
    receipts: () => countOf(client, "select count(*)::int as n from bench_receipts"),
    async stop() {
      if (launched) await DBOS.shutdown();
      await receipts?.end();
      receipts = null;
      await enqueuer.destroy();
      await client.end();
    },
  };
}

const version = installedVersion("@dbos-inc/dbos-sdk");

export const dbosConfigurations: PeerConfiguration[] = [
  {
    key: "dbos-queue",
    system: "dbos",
    mode: "queue",
    description:
      `DBOS ${version}: a workflow of 3 DBOS.runStep steps, drained from DBOS.registerQueue's queue with ` +
      `workerConcurrency: loops and minPollingIntervalMs: ${DBOS_POLL_MS}`,
    latency: true,
    make: (urls) => dbosContender(urls),
  },
];
