// durable-next in the peers section (scripts/bench/peers.ts, docs/performance.md "Peers"): a job
// is a run of 3 `run` steps, whose receipts the engine writes. Two modes: worker mode,
// `work({ concurrency: loops })`, and tick loops: `loops` concurrent loops each calling `tick()`
// until a tick claims nothing (what cron calls of the tick route do, in process).
import pg from "pg";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "../../lib/durable";
import {
  type Contender,
  countOf,
  enqueueFour,
  type PeerConfiguration,
  type PeerUrls,
  thirdReceiptWritten,
} from "./peer-contender";

export const peerRun = defineWorkflow({
  name: "bench-peer",
  input: z.object({ n: z.number() }),
  async run(ctx) {
    await ctx.step.run("one", () => 1);
    await ctx.step.run("two", () => 2);
    return ctx.step.run("three", () => {
      thirdReceiptWritten();
      return 3;
    });
  },
});

export const quiet = { secrets: { durable: "bench" }, log: () => {} } as const;

type DurableMode = "worker" | "ticks";

/** One tick loop: tick until a tick claims nothing. */
async function tickLoop(durable: Durable): Promise<void> {
  for (;;) {
    const report = await durable.tick({ budgetMs: 40_000 });
    if (report.claimed === 0) return;
  }
}

async function durableContender(urls: PeerUrls, mode: DurableMode): Promise<Contender> {
  let durable: Durable | null = null;
  const admin = createDurable({
    db: await connect(urls.direct, { driver: "pg", poolSize: 4 }),
    workflows: [peerRun],
    ...quiet,
  });
  await admin.migrate();
  const client = new pg.Client({ connectionString: urls.direct });
  await client.connect();
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', new.id); return null; end $$;
     create trigger bench_done after update of status on durable_runs
       for each row when (new.status = 'completed') execute function bench_done();`,
  );
  let stopWork: AbortController | null = null;
  let working: Promise<unknown> | null = null;
  return {
    enqueue: (count) => enqueueFour(client, count, (i) => admin.start(peerRun, { n: i }, { id: `job-${i}` })),
    async start(loops, onQuery) {
      const instance = createDurable({
        db: await connect(urls.worker, { driver: "pg", poolSize: loops + 2, onQuery }),
        workflows: [peerRun],
        ...quiet,
      });
      durable = instance;
      if (mode === "ticks") {
        working = Promise.all(Array.from({ length: loops }, () => tickLoop(instance)));
        return;
      }
      stopWork = new AbortController();
      working = instance.work({ concurrency: loops, signal: stopWork.signal });
    },
    async enqueueOne(n) {
      await durable!.start(peerRun, { n }, { id: `one-${n}` });
    },
    remaining: () => countOf(client, "select count(*)::int as n from durable_runs where status <> 'completed'"),
    receipts: () => countOf(client, "select count(*)::int as n from durable_steps where status = 'completed'"),
    async stop() {
      stopWork?.abort();
      await working;
      await durable?.close();
      await admin.close();
      await client.end();
    },
  };
}

export const durableConfigurations: PeerConfiguration[] = [
  {
    key: "durable-worker",
    system: "durable",
    mode: "worker",
    description: "durable.work({ concurrency: loops })",
    latency: true,
    make: (urls) => durableContender(urls, "worker"),
  },
  {
    key: "durable-ticks",
    system: "durable",
    mode: "tick loops",
    description: "loops concurrent loops, each calling durable.tick() until a tick claims nothing",
    latency: false,
    make: (urls) => durableContender(urls, "ticks"),
  },
];

/** Our in-process path: start, then advance(id) at once, timed until the completion committed. */
export async function advanceAfterStart(urls: PeerUrls, samples: number, offset: number): Promise<number[]> {
  const admin = createDurable({ db: await connect(urls.direct, { driver: "pg" }), workflows: [peerRun], ...quiet });
  await admin.migrate();
  await admin.close();
  const durable = createDurable({
    db: await connect(urls.worker, { driver: "pg", poolSize: 2 }),
    workflows: [peerRun],
    ...quiet,
  });
  try {
    const times: number[] = [];
    for (let i = -5; i < samples; i++) {
      const t0 = performance.now();
      const { id } = await durable.start(peerRun, { n: offset + i }, { id: `adv-${offset + i}` });
      const outcome = await durable.advance(id);
      if (outcome !== "completed") throw new Error(`run ${id}: advance returned ${outcome}`);
      if (i >= 0) times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await durable.close();
  }
}
