// Flow control at scale (docs/guide/flow-control.md, docs/sql.md "Flow control"): the latency of a
// rate-limited claim with 1,000,000 finished runs of the limited workflow (all in the key index,
// their first claims a day old) and a backlog of 10,000 due runs of 100 full keys, against an
// empty table. The backlog is first met by claims that hold it (out of the due range, at its
// slots; timed as its own row), then each sample starts a due run of one of 10 keys with room,
// times its claim at the client and finishes it, in alternating blocks on the two databases, as
// scripts/bench/claim-latency.ts does.
import type pg from "pg";
import { migratedClient } from "./claim-latency";
import { ms, percentile, ratio } from "./report";
import { threeSteps } from "./throughput";

const WORKFLOWS = JSON.stringify([threeSteps.name]);
const VERSIONS = JSON.stringify({ [threeSteps.name]: [""] });
const LIMIT = 100;
const RATES = JSON.stringify({ [threeSteps.name]: { limit: LIMIT, periodMs: 3_600_000 } });
const FULL_KEYS = 100;
const BLOCK = 25;

async function prepare(suffix: string, finished: number, backlog: number) {
  const client = await migratedClient(suffix);
  const t0 = performance.now();
  if (finished > 0) {
    await client.query(
      `insert into durable_runs (id, workflow, status, input, output, wake_at, fence, attempts, created_at,
                                 updated_at, finished_at, rate_key, first_claimed_at)
       select 'done-' || lpad(g::text, 7, '0'), $1, 'completed', '{}'::jsonb, '1'::jsonb, null, 1, 1, ts, ts, ts,
              'k-' || (g % 1000), ts
         from generate_series(1, $2::int) g,
              lateral (select now() - interval '30 days' + g * interval '1 second') t(ts)`,
      [threeSteps.name, finished],
    );
  }
  if (backlog > 0) {
    // 100 keys full for the hour (LIMIT first claims each, a minute ago), and the backlog due on them.
    await client.query(
      `insert into durable_runs (id, workflow, status, input, output, wake_at, fence, attempts, created_at,
                                 updated_at, finished_at, rate_key, first_claimed_at)
       select 'window-' || g, $1, 'completed', '{}'::jsonb, '1'::jsonb, null, 1, 1, now(), now(), now(),
              'full-' || (g % ${FULL_KEYS}), now() - interval '1 minute'
         from generate_series(1, ${FULL_KEYS * LIMIT}) g`,
      [threeSteps.name],
    );
    await client.query(
      `insert into durable_runs (id, workflow, input, wake_at, rate_key)
       select 'backlog-' || g, $1, '{}'::jsonb, durable_now() - interval '1 second', 'full-' || (g % ${FULL_KEYS})
         from generate_series(1, $2::int) g`,
      [threeSteps.name, backlog],
    );
  }
  await client.query("analyze");
  return { client, fillSeconds: (performance.now() - t0) / 1000 };
}

const claim = (client: pg.Client) =>
  client.query(
    `select durable_claim_run($1::jsonb, null, 30000, '[]'::jsonb, '{}'::jsonb, $2::jsonb, $3::jsonb) as claimed`,
    [WORKFLOWS, VERSIONS, RATES],
  );

/** Claims until nothing is due: each call holds the backlogs of up to 20 keys. Answers each call's ms. */
async function holdBacklog(client: pg.Client): Promise<number[]> {
  const times: number[] = [];
  for (;;) {
    const t0 = performance.now();
    const { rows } = await claim(client);
    times.push(performance.now() - t0);
    if (rows[0].claimed) throw new Error(`a full key's run was claimed: ${rows[0].claimed.run.id}`);
    const due = await client.query(
      "select exists (select 1 from durable_runs where wake_at <= durable_now() and status = 'pending') as due",
    );
    if (!due.rows[0].due) return times;
  }
}

let sequence = 0;

/** One sample: a due run of a key with room, its claim timed, then finished. */
async function sampleClaim(client: pg.Client): Promise<number> {
  const id = `flow-${++sequence}`;
  await client.query(
    `insert into durable_runs (id, workflow, input, wake_at, rate_key)
     values ($1, $2, '{}'::jsonb, durable_now(), 's-' || ($3::int % 10))`,
    [id, threeSteps.name, sequence],
  );
  const t0 = performance.now();
  const { rows } = await claim(client);
  const elapsed = performance.now() - t0;
  const claimed = rows[0].claimed;
  if (claimed?.run.id !== id) throw new Error(`claim returned ${JSON.stringify(claimed?.run?.id)}, expected ${id}`);
  await client.query(`select durable_finish_run($1, $2::bigint, 'completed', '1'::jsonb, null, '[]'::jsonb, null)`, [
    id,
    claimed.run.fence,
  ]);
  return elapsed;
}

export async function flowControlSection(
  heading: (text: string) => void,
  table: (rows: string[][]) => void,
  samples: number,
  finished: number,
  backlog: number,
): Promise<void> {
  const n = (x: number) => x.toLocaleString("en-US");
  heading(`Flow control: a rate-limited claim with ${n(finished)} finished runs and ${n(backlog)} due runs held`);
  const empty = await prepare("flow_empty", 0, 0);
  const full = await prepare("flow_full", finished, backlog);
  try {
    const holding = await holdBacklog(full.client);
    const held = await full.client.query(
      `select count(*)::int as n,
              round(extract(epoch from min(rate_slot_at) - durable_now()) / 60)::int as first_min,
              round(extract(epoch from max(rate_slot_at) - durable_now()) / 60)::int as last_min
         from durable_runs where rate_slot_at is not null`,
    );
    for (let i = 0; i < 20; i++) {
      await sampleClaim(empty.client);
      await sampleClaim(full.client);
    }
    const times = { empty: [] as number[], full: [] as number[] };
    for (let done = 0; done < samples; done += BLOCK) {
      for (let i = 0; i < BLOCK; i++) times.empty.push(await sampleClaim(empty.client));
      for (let i = 0; i < BLOCK; i++) times.full.push(await sampleClaim(full.client));
    }
    const p50 = { empty: percentile(times.empty, 50), full: percentile(times.full, 50) };
    table([
      ["claim (rate limit 100/h per key, 10 keys)", "p50", "p99", "samples"],
      ["empty table", ms(p50.empty), ms(percentile(times.empty, 99)), String(times.empty.length)],
      [
        `${n(finished)} finished + ${n(backlog)} held`,
        ms(p50.full),
        ms(percentile(times.full, 99)),
        String(times.full.length),
      ],
      ["full / empty (p50)", ratio(p50.full / p50.empty), "", ""],
      [
        `a claim that holds up to 20 keys' backlogs`,
        ms(percentile(holding, 50)),
        ms(percentile(holding, 99)),
        String(holding.length),
      ],
    ]);
    table([
      [
        "held runs",
        `${n(held.rows[0].n)}, their slots ${held.rows[0].first_min}–${held.rows[0].last_min} min from now ` +
          `(each key's window frees then, ${LIMIT}/h per key)`,
      ],
      ["fill (generate_series, analyze)", `${full.fillSeconds.toFixed(1)} s`],
    ]);
  } finally {
    await empty.client.end();
    await full.client.end();
  }
}
