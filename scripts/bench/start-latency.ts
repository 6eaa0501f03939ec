// Latency from `start` to completion of a single 3-step run on an idle system: start, then
// `advance(id)` at once (what the start route does), timed until advance returns "completed".
import { sql } from "kysely";
import { createDurable } from "../../lib/durable";
import { open, type Target } from "./databases";
import { percentile } from "./report";
import { threeSteps } from "./throughput";

export interface Latency {
  samples: number;
  p50: number;
  p99: number;
  mean: number;
}

export async function startToCompletion(target: Target, samples: number, warmup = 20): Promise<Latency> {
  const db = await open(target, "start_latency", { poolSize: 2 });
  const durable = createDurable({ db, workflows: [threeSteps], secrets: { durable: "bench" }, log: () => {} });
  await durable.migrate();
  await sql`create table bench_effects (id bigserial primary key, run_id text not null, step text not null)`.execute(
    db,
  );
  const times: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    const t0 = performance.now();
    const { id } = await durable.start(threeSteps, { n: i }, { id: `lat-${i}` });
    const outcome = await durable.advance(id);
    const elapsed = performance.now() - t0;
    if (outcome !== "completed") throw new Error(`run ${id}: advance returned ${outcome}`);
    if (i >= warmup) times.push(elapsed);
  }
  await durable.close();
  return {
    samples,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
  };
}
