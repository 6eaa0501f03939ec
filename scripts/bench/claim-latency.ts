// Claim latency with 1,000,000 finished runs vs an empty table. Each sample: start a due run
// (untimed), time `select durable_claim_run(...)` at the client, then finish the run with
// durable_finish_run so it is no longer due (untimed). The two databases are sampled in
// alternating blocks so background load on the machine hits both alike.
import pg from "pg";
import { connect, createDurable } from "../../lib/durable";
import { freshServerDatabase } from "./databases";
import { percentile } from "./report";
import { threeSteps } from "./throughput";

const WORKFLOWS = JSON.stringify([threeSteps.name]);
const BLOCK = 25;

export interface ClaimLatency {
  finishedRuns: number;
  samples: number;
  p50: number;
  p99: number;
}

export interface ClaimLatencyReport {
  empty: ClaimLatency;
  full: ClaimLatency;
  fillSeconds: number;
  /** EXPLAIN ANALYZE of the claim's pick query with literal values, on the full table. */
  plan: string[];
  /** The plan plpgsql may cache for the same query (generic: parameters, not literals). */
  genericPlan: string[];
}

/** A fresh database `durable_bench_<suffix>`, migrated, and a plain client on it to fill it fast. */
export async function migratedClient(suffix: string): Promise<pg.Client> {
  const url = await freshServerDatabase(suffix);
  const durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 1 }),
    workflows: [threeSteps],
    secrets: { durable: "bench" },
    log: () => {},
  });
  await durable.migrate();
  await durable.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

async function prepare(suffix: string, finished: number): Promise<{ client: pg.Client; fillSeconds: number }> {
  const client = await migratedClient(suffix);
  const t0 = performance.now();
  if (finished > 0) {
    // Finished rows satisfy the check constraint: a terminal status and no wake_at.
    await client.query(
      `insert into durable_runs (id, workflow, status, input, output, wake_at, fence, attempts,
                                 created_at, updated_at, finished_at)
       select 'done-' || lpad(g::text, 7, '0'), $1, 'completed', '{}'::jsonb, '1'::jsonb, null, 1, 1,
              ts, ts, ts
         from generate_series(1, $2::int) g,
              lateral (select now() - interval '30 days' + g * interval '1 second') t(ts)`,
      [threeSteps.name, finished],
    );
  }
  await client.query("analyze");
  return { client, fillSeconds: (performance.now() - t0) / 1000 };
}

let sequence = 0;

/** One sample: start a due run, time its claim, finish it. Returns the claim's round trip in ms. */
export async function sampleClaim(client: pg.Client): Promise<number> {
  const id = `due-${++sequence}`;
  await client.query(
    `insert into durable_runs (id, workflow, input, wake_at) values ($1, $2, '{}'::jsonb, durable_now())`,
    [id, threeSteps.name],
  );
  const t0 = performance.now();
  const { rows } = await client.query(`select durable_claim_run($1::jsonb, null, 30000, '[]'::jsonb) as claimed`, [
    WORKFLOWS,
  ]);
  const elapsed = performance.now() - t0;
  const claimed = rows[0].claimed;
  if (!claimed || claimed.run.id !== id)
    throw new Error(`claim returned ${JSON.stringify(claimed?.run?.id)}, expected ${id}`);
  const finished = await client.query(
    `select durable_finish_run($1, $2::bigint, 'completed', '1'::jsonb, null, '[]'::jsonb, null) as ok`,
    [id, claimed.run.fence],
  );
  if (finished.rows[0].ok !== "finished") throw new Error(`finish of ${id} refused`);
  return elapsed;
}

const PICK = (now: string) => `
  select * from durable_runs
   where status in ('pending', 'running', 'waiting') and wake_at <= '${now}'::timestamptz
     and workflow = any (array['${threeSteps.name}']) and not (id = any (array[]::text[]))
   order by wake_at
   limit 1
   for update skip locked`;

async function explain(client: pg.Client): Promise<{ plan: string[]; genericPlan: string[] }> {
  await client.query(
    `insert into durable_runs (id, workflow, input, wake_at)
     values ('explain-me', $1, '{}'::jsonb, durable_now() - interval '1 second')`,
    [threeSteps.name],
  );
  const now = (await client.query(`select durable_now()::text as now`)).rows[0].now as string;
  await client.query("begin");
  const plan = (await client.query(`explain (analyze, buffers, timing off, summary off) ${PICK(now)}`)).rows.map(
    (r) => r["QUERY PLAN"] as string,
  );
  await client.query("rollback");
  await client.query(`prepare durable_pick(text[], text[], timestamptz) as
    select * from durable_runs
     where status in ('pending', 'running', 'waiting') and wake_at <= $3
       and workflow = any ($1) and not (id = any ($2))
     order by wake_at limit 1 for update skip locked`);
  await client.query("set plan_cache_mode = force_generic_plan");
  const genericPlan = (
    await client.query(
      `explain (costs off) execute durable_pick(array['${threeSteps.name}'], array[]::text[], '${now}')`,
    )
  ).rows.map((r) => r["QUERY PLAN"] as string);
  await client.query("reset plan_cache_mode");
  await client.query("deallocate durable_pick");
  await client.query(`delete from durable_runs where id = 'explain-me'`);
  return { plan, genericPlan };
}

export async function claimLatency(samples: number, finished: number): Promise<ClaimLatencyReport> {
  const empty = await prepare("claim_empty", 0);
  const full = await prepare("claim_full", finished);
  const times = { empty: [] as number[], full: [] as number[] };
  // Warm both sessions (plpgsql compiles the function and caches its plans on first calls).
  for (let i = 0; i < 20; i++) {
    await sampleClaim(empty.client);
    await sampleClaim(full.client);
  }
  for (let done = 0; done < samples; done += BLOCK) {
    const n = Math.min(BLOCK, samples - done);
    for (let i = 0; i < n; i++) times.empty.push(await sampleClaim(empty.client));
    for (let i = 0; i < n; i++) times.full.push(await sampleClaim(full.client));
  }
  const { plan, genericPlan } = await explain(full.client);
  await empty.client.end();
  await full.client.end();
  const summary = (t: number[], finishedRuns: number): ClaimLatency => ({
    finishedRuns,
    samples: t.length,
    p50: percentile(t, 50),
    p99: percentile(t, 99),
  });
  return {
    empty: summary(times.empty, 0),
    full: summary(times.full, finished),
    fillSeconds: full.fillSeconds,
    plan,
    genericPlan,
  };
}
