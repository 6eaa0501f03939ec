// The claim's priority walk when nothing is due (docs/sql.md, "Flow control", "Priority in the
// claim"): an idle claim over 20,000 waiting runs at 20,000 distinct priorities against the same
// runs at one priority, timed at the client in alternating blocks. Before migration 0012 the walk
// probed every priority present among unfinished runs, waiting ones too (1.4 s an idle tick at
// distinct priorities, 17.6 ms at one); it now visits only due runs.
import type pg from "pg";
import { migratedClient } from "./claim-latency";
import { ms, percentile, ratio } from "./report";
import { threeSteps } from "./throughput";

const WAITING = 20_000;
const BLOCK = 10;

async function prepare(suffix: string, distinct: boolean): Promise<pg.Client> {
  const client = await migratedClient(suffix);
  await client.query(
    `insert into durable_runs (id, workflow, status, input, wake_at, fence, attempts, priority)
     select 'waiting-' || g, $1, 'waiting', '{}'::jsonb, durable_now() + interval '1 hour', 1, 1,
            case when $2 then g else 0 end
       from generate_series(1, $3::int) g`,
    [threeSteps.name, distinct, WAITING],
  );
  await client.query("analyze");
  return client;
}

async function idleClaim(client: pg.Client): Promise<number> {
  const t0 = performance.now();
  const { rows } = await client.query(
    `select durable_claim_run($1::jsonb, null, 30000, '[]'::jsonb, '{}'::jsonb, null, '{}'::jsonb, true) as claimed`,
    [JSON.stringify([threeSteps.name])],
  );
  const elapsed = performance.now() - t0;
  if (rows[0].claimed) throw new Error("an idle claim claimed a run");
  return elapsed;
}

/** Rows of the flow-control table: the idle claim at distinct priorities and at one. */
export async function priorityWalkRows(samples: number): Promise<string[][]> {
  const one = await prepare("walk_one", false);
  const distinct = await prepare("walk_distinct", true);
  try {
    for (let i = 0; i < 10; i++) {
      await idleClaim(one);
      await idleClaim(distinct);
    }
    const times = { one: [] as number[], distinct: [] as number[] };
    for (let done = 0; done < samples; done += BLOCK) {
      for (let i = 0; i < BLOCK; i++) times.one.push(await idleClaim(one));
      for (let i = 0; i < BLOCK; i++) times.distinct.push(await idleClaim(distinct));
    }
    const p50 = { one: percentile(times.one, 50), distinct: percentile(times.distinct, 50) };
    const n = WAITING.toLocaleString("en-US");
    return [
      [`idle claim, ${n} waiting runs`, "p50", "p99", "samples"],
      ["at one priority", ms(p50.one), ms(percentile(times.one, 99)), String(times.one.length)],
      [
        `at ${n} distinct priorities`,
        ms(p50.distinct),
        ms(percentile(times.distinct, 99)),
        String(times.distinct.length),
      ],
      ["distinct / one (p50)", ratio(p50.distinct / p50.one), "", ""],
    ];
  } finally {
    await one.end();
    await distinct.end();
  }
}
