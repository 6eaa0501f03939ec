// pg-boss in the peers section (scripts/bench/peers.ts, docs/performance.md "Peers"): a job's
// handler inserts 3 receipts, each its own statement and commit. Two configurations:
//   default  one `work()` per loop, one job per fetch (batchSize 1), polling every 0.5 s (the
//            shortest it accepts); pg-boss waits out its polling interval after a fetch even when
//            it found a job, so the handler asks for the next fetch at once (notifyWorker, its
//            public API) and a drain is not held to one job per interval;
//   tuned    its throughput options (pg-boss's WorkOptions): one `work()` with localConcurrency =
//            loops (that many workers), batchSize 10 (the handler writes the batch's jobs one after
//            another, and pg-boss completes the batch in one statement), burstWhenBatchFull (fetch
//            again at once while batches come back full); and LISTEN/NOTIFY (useListenNotify, the
//            queue's `notify`), so an idle worker is woken when a job is sent instead of polling.
import { PgBoss } from "pg-boss";
import pg from "pg";
import {
  type Contender,
  countOf,
  INSERT_RECEIPT,
  installedVersion,
  type PeerConfiguration,
  type PeerUrls,
  RECEIPTS,
  thirdReceiptWritten,
} from "./peer-contender";

/** pg-boss polls; this is the shortest interval it accepts (pollingIntervalSeconds >= 0.5). */
export const PG_BOSS_POLL_SECONDS = 0.5;
/** Jobs per fetch in the tuned configuration. */
export const PG_BOSS_BATCH = 10;

const QUEUE = "bench";

async function receipt(pool: pg.Pool, id: string): Promise<void> {
  await pool.query(INSERT_RECEIPT, [id, 1]);
  await pool.query(INSERT_RECEIPT, [id, 2]);
  await pool.query(INSERT_RECEIPT, [id, 3]);
  thirdReceiptWritten();
}

/** Starts the workers of one configuration on `worker`, whose handlers write through `receipts`. */
async function startWorkers(worker: PgBoss, receipts: pg.Pool, loops: number, tuned: boolean): Promise<void> {
  if (tuned) {
    await worker.work<{ n: number }>(
      QUEUE,
      {
        batchSize: PG_BOSS_BATCH,
        localConcurrency: loops,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: PG_BOSS_POLL_SECONDS,
      },
      async (jobs) => {
        for (const job of jobs) await receipt(receipts, job.id);
      },
    );
    return;
  }
  for (let i = 0; i < loops; i++) {
    let id = "";
    id = await worker.work<{ n: number }>(
      QUEUE,
      { batchSize: 1, pollingIntervalSeconds: PG_BOSS_POLL_SECONDS },
      async ([job]) => {
        await receipt(receipts, job!.id);
        worker.notifyWorker(id);
      },
    );
  }
}

const report = (error: Error) => console.error(`  pg-boss: ${error.message}`);

async function pgBossContender(urls: PeerUrls, tuned: boolean): Promise<Contender> {
  const boss = new PgBoss({ connectionString: urls.direct, max: 4, schedule: false });
  boss.on("error", report);
  await boss.start();
  await boss.createQueue(QUEUE, tuned ? { notify: true } : {});
  const client = new pg.Client({ connectionString: urls.direct });
  await client.connect();
  await client.query(RECEIPTS);
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', new.id::text); return null; end $$;
     create trigger bench_done after update of state on pgboss.job
       for each row when (new.state = 'completed') execute function bench_done();`,
  );
  let worker: PgBoss | null = null;
  let pool: pg.Pool | null = null;
  return {
    async enqueue(count) {
      for (let i = 0; i < count; i += 500) {
        const jobs = Array.from({ length: Math.min(500, count - i) }, (_, k) => ({ data: { n: i + k } }));
        await boss.insert(QUEUE, jobs);
      }
      await client.query("analyze");
    },
    async start(loops) {
      worker = new PgBoss({
        connectionString: urls.worker,
        max: loops + 2,
        schedule: false,
        supervise: false,
        migrate: false,
        useListenNotify: tuned,
      });
      worker.on("error", report);
      await worker.start();
      pool = new pg.Pool({ connectionString: urls.worker, max: loops + 2 });
      await startWorkers(worker, pool, loops, tuned);
    },
    async enqueueOne(n) {
      await worker!.send(QUEUE, { n });
    },
    remaining: () => countOf(client, "select count(*)::int as n from pgboss.job where state <> 'completed'"),
    receipts: () => countOf(client, "select count(*)::int as n from bench_receipts"),
    async stop() {
      await worker?.stop({ graceful: true });
      await pool?.end();
      await boss.stop({ graceful: true });
      await client.end();
    },
  };
}

const version = installedVersion("pg-boss");

export const pgBossConfigurations: PeerConfiguration[] = [
  {
    key: "pg-boss-default",
    system: "pg-boss",
    mode: "default",
    description:
      `pg-boss ${version}: one work() per loop, batchSize 1, pollingIntervalSeconds ${PG_BOSS_POLL_SECONDS}, ` +
      "the handler calling notifyWorker(id) so the worker fetches again at once",
    latency: true,
    make: (urls) => pgBossContender(urls, false),
  },
  {
    key: "pg-boss-tuned",
    system: "pg-boss",
    mode: "tuned",
    description:
      `pg-boss ${version}: one work() with localConcurrency: loops, batchSize ${PG_BOSS_BATCH}, ` +
      "burstWhenBatchFull, useListenNotify and a notify queue",
    latency: true,
    make: (urls) => pgBossContender(urls, true),
  },
];
