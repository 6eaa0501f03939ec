// Operations on 100,000 runs (docs/guide/runs.md, "Finding runs", "Acting on many runs"): the
// latency of list({ tag }) and list({ metadata }) on a table of 200,000 runs, and cancelMany over
// the 100,000 of them that are pending. The runs are inserted by generate_series, as
// scripts/bench/claim-latency.ts makes its finished runs.
import { sql } from "kysely";
import { connect, createDurable, type Durable } from "../../lib/durable";
import { freshServerDatabase } from "./databases";
import { ms, percentile } from "./report";
import { threeSteps } from "./throughput";

export const OPERATION_RUNS = 100_000;
const SAMPLES = 50;

async function sample(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const began = performance.now();
    await fn();
    times.push(performance.now() - began);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** 100,000 completed runs (tag `t-<n % 1000>`, 1 in 100 with metadata) and 100,000 pending runs tagged `recall`. */
async function fill(durable: Durable): Promise<void> {
  await sql`
    insert into durable_runs (id, workflow, status, input, finished_at, created_at, tags, metadata)
    select 'done-' || n, 'bench-three-steps', 'completed', '{}', now(), now() - n * interval '1 millisecond',
           array['t-' || (n % 1000)],
           case when n % 100 = 0 then jsonb_build_object('customer', 'c-' || (n % 1000)) else '{}' end
      from generate_series(1, ${OPERATION_RUNS}) n`.execute(durable.db);
  await sql`
    insert into durable_runs (id, workflow, status, input, wake_at, created_at, tags)
    select 'recall-' || n, 'bench-three-steps', 'pending', '{}', 'infinity', now() - n * interval '1 millisecond',
           array['recall']
      from generate_series(1, ${OPERATION_RUNS}) n`.execute(durable.db);
  await sql`analyze durable_runs`.execute(durable.db);
}

export async function operationsSection(
  heading: (text: string) => void,
  table: (rows: string[][]) => void,
): Promise<void> {
  heading(`Operations: list filters and cancelMany on ${(2 * OPERATION_RUNS).toLocaleString("en-US")} runs`);
  const url = await freshServerDatabase("operations");
  const durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 2 }),
    workflows: [threeSteps],
    secrets: { durable: "bench" },
    log: () => {},
  });
  try {
    await durable.migrate();
    const filled = performance.now();
    await fill(durable);
    const fillSeconds = (performance.now() - filled) / 1000;
    const rare = await sample(() => durable.list({ tag: "t-7" }));
    const common = await sample(() => durable.list({ tag: "recall" }));
    const metadata = await sample(() => durable.list({ metadata: { customer: "c-700" } }));
    const paged = await sample(async () => {
      let cursor: string | undefined;
      do cursor = (await durable.list({ tag: "t-8", limit: 20, cursor })).nextCursor ?? undefined;
      while (cursor);
    });
    const began = performance.now();
    const result = await durable.cancelMany({ tag: "recall" }, { reason: "bench" });
    const cancelMs = performance.now() - began;
    table([
      ["", "p50", "p99"],
      ["list({ tag }), 100 of 200,000 runs match", ms(rare.p50), ms(rare.p99)],
      ["list({ tag }), 100,000 match (first page)", ms(common.p50), ms(common.p99)],
      ["list({ metadata }), 1 key, 1 run matches", ms(metadata.p50), ms(metadata.p99)],
      ["list({ tag }), 100 runs in 5 pages of 20", ms(paged.p50), ms(paged.p99)],
    ]);
    table([
      ["cancelMany({ tag: 'recall' })", `${result.changed.toLocaleString("en-US")} of ${result.matched} runs`],
      ["took", `${(cancelMs / 1000).toFixed(1)} s (${Math.round(result.changed / (cancelMs / 1000))} runs/s)`],
      ["per batch of 500", ms(cancelMs / Math.ceil(result.matched / 500))],
      ["fill (generate_series, analyze)", `${fillSeconds.toFixed(1)} s`],
    ]);
  } finally {
    await durable.close();
  }
}
