// graphile-worker in the peers section (scripts/bench/peers.ts, docs/performance.md "Peers"): a
// job's task inserts 3 receipts, each its own statement and commit. Two configurations: its
// default, `run({ concurrency })`, and its documented throughput one (its docs' "Performance"
// page, "Batching"): a local queue, so the pool fetches and locks a batch of jobs at once and
// serves its workers from it, and batched completions (completeJobBatchDelay and
// failJobBatchDelay 0: the completions of one turn of the event loop in one statement).
import { Logger, makeWorkerUtils, type Runner, run as runGraphile, runMigrations } from "graphile-worker";
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

/**
 * The local queue's size. Its docs suggest `concurrency + 1` as a starting point and a larger one
 * for many fast jobs (their own performance figures use 500 for 24 workers); 20 is above
 * `concurrency + 1` at both loop counts and keeps few jobs locked ahead of the workers.
 */
export const GRAPHILE_LOCAL_QUEUE = 20;

const silent = new Logger(() => () => {});

async function graphileContender(urls: PeerUrls, tuned: boolean): Promise<Contender> {
  await runMigrations({ connectionString: urls.direct, logger: silent });
  const client = new pg.Client({ connectionString: urls.direct });
  await client.connect();
  await client.query(RECEIPTS);
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', old.id::text); return null; end $$;
     create trigger bench_done after delete on graphile_worker._private_jobs
       for each row execute function bench_done();`,
  );
  const utils = await makeWorkerUtils({ connectionString: urls.direct, logger: silent });
  let runner: Runner | null = null;
  let pool: pg.Pool | null = null;
  return {
    enqueue: (count) => enqueueFour(client, count, (i) => utils.addJob("bench", { n: i })),
    async start(loops) {
      pool = new pg.Pool({ connectionString: urls.worker, max: loops + 2 });
      const report = (error: Error) => console.error(`  graphile-worker: ${error.message}`);
      pool.on("error", report);
      pool.on("connect", (connection) => connection.on("error", report));
      runner = await runGraphile({
        pgPool: pool,
        concurrency: loops,
        noHandleSignals: true,
        logger: silent,
        ...(tuned
          ? {
              preset: {
                worker: { localQueue: { size: GRAPHILE_LOCAL_QUEUE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
              },
            }
          : {}),
        taskList: {
          bench: async (_payload, helpers) => {
            const job = String(helpers.job.id);
            await helpers.query(INSERT_RECEIPT, [job, 1]);
            await helpers.query(INSERT_RECEIPT, [job, 2]);
            await helpers.query(INSERT_RECEIPT, [job, 3]);
            thirdReceiptWritten();
          },
        },
      });
    },
    async enqueueOne(n) {
      await runner!.addJob("bench", { n });
    },
    remaining: () => countOf(client, "select count(*)::int as n from graphile_worker._private_jobs"),
    receipts: () => countOf(client, "select count(*)::int as n from bench_receipts"),
    async stop() {
      await runner?.stop();
      await pool?.end();
      await utils.release();
      await client.end();
    },
  };
}

const version = installedVersion("graphile-worker");

export const graphileConfigurations: PeerConfiguration[] = [
  {
    key: "graphile-default",
    system: "graphile-worker",
    mode: "default",
    description: `graphile-worker ${version}: run({ concurrency: loops }), nothing else set`,
    latency: true,
    make: (urls) => graphileContender(urls, false),
  },
  {
    key: "graphile-tuned",
    system: "graphile-worker",
    mode: "tuned",
    description:
      `graphile-worker ${version}: run({ concurrency: loops, preset: { worker: { localQueue: { size: ` +
      `${GRAPHILE_LOCAL_QUEUE} }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } })`,
    latency: true,
    make: (urls) => graphileContender(urls, true),
  },
];
