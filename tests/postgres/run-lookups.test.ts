// The engine's fenced writes find their run by primary key (migration 0006, docs/sql.md). Before it,
// `id = $1 and fence = $2 and status = 'running'` ran, in the generic plan plpgsql caches after a
// few calls, over durable_runs_status_created: every receipt read every entry of status 'running',
// live and dead. auto_explain prints the plan of each statement inside the functions; none may
// name that index.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { collectNestedPlans } from "../helpers/nested-plans";

const CALLS = 8; // plpgsql plans a statement for its arguments 5 times, then may keep a generic plan

const flow = defineWorkflow({ name: "lookups", input: z.object({}), run: async () => null });

let url: string;
let admin: Durable;
let session: pg.Client;
let plans: string[] = [];
beforeAll(async () => {
  url = await createTestDatabase("durable_run_lookups");
  admin = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [flow], secrets: { durable: "t" } });
  await admin.migrate();
  for (let i = 0; i < 4 * CALLS; i++) await admin.start(flow, {}, { id: `r-${i}` });
  session = new pg.Client({ connectionString: url });
  await session.connect();
  // Enough finished runs that no scan of the whole table looks cheap.
  await session.query(
    `insert into durable_runs (id, workflow, status, input, finished_at)
     select 'done-' || n, 'lookups', 'completed', '{}', now() from generate_series(1, 5000) n`,
  );
  // A production table between bursts: 'running' rare in the statistics, so the planner rates an
  // index on (status, …, id) as cheap as the primary key.
  await session.query("analyze durable_runs");
  plans = await collectNestedPlans(session);
});
afterAll(async () => {
  await session?.end();
  await admin?.close();
});

const step = (id: string) =>
  JSON.stringify({ step_id: id, seq: 0, kind: "run", status: "completed", attempt: 1, result: 1, result_bytes: 1 });

async function claim(): Promise<{ id: string; fence: number }> {
  const { rows } = await session.query(
    `select durable_claim_run('["lookups"]', null, 60000, '[]', '{}', '{"lookups":[""]}') as c`,
  );
  return { id: rows[0].c.run.id, fence: Number(rows[0].c.run.fence) };
}

it("receipts, completions, releases, suspensions, stream appends and status reads use the primary key", async () => {
  for (let i = 0; i < CALLS; i++) {
    const a = await claim();
    await session.query("select durable_record_step($1, $2, $3::jsonb)", [a.id, a.fence, step("one")]);
    await session.query("select durable_append_stream($1, $2, 'one', 1, '[1]')", [a.id, a.fence]);
    await session.query("select durable_read_run($1)", [a.id]);
    await session.query("select durable_finish_run($1, $2, 'completed', '1', null, '[]', $3::jsonb)", [
      a.id,
      a.fence,
      step("two"),
    ]);
    const b = await claim();
    await session.query("select durable_release_run($1, $2, 'one')", [b.id, b.fence]);
    const c = await claim();
    await session.query(
      `select durable_suspend_run($1, $2, '[{"step_id":"nap","seq":0,"kind":"sleep","wake_in_ms":60000}]',
                                  '{"kind":"sleep","name":"nap"}')`,
      [c.id, c.fence],
    );
  }
  const fenced = plans.filter((p) => /where id = p_run_id and/.test(p));
  // Every function above logged its fenced statement's plan at every call (not a vacuous pass).
  expect(fenced.length).toBeGreaterThanOrEqual(6 * CALLS);
  expect(fenced.every((p) => p.includes("durable_runs_pkey"))).toBe(true);
  expect(plans.filter((p) => p.includes("durable_runs_status_created"))).toEqual([]);
});

it("a child's end, its parent's suspension and claim, a cancel and an overdue end use the primary key", async () => {
  plans.length = 0;
  for (let i = 0; i < CALLS; i++) {
    const parent = await claim();
    const kid = `kid-${i}`;
    const invoke = {
      step_id: "kid",
      seq: 0,
      kind: "invoke",
      branches: [{ name: "run", run: kid }],
      target_runs: [kid],
      start: { id: kid, workflow: "lookups", input: {}, version: null, deadline_in_ms: 60000 },
    };
    await session.query(`select durable_suspend_run($1, $2, $3::jsonb, '{"kind":"run","name":"kid"}')`, [
      parent.id,
      parent.fence,
      JSON.stringify([invoke]),
    ]);
    const { rows } = await session.query(
      `select durable_claim_run('["lookups"]', $1, 60000, '[]', '{}', '{"lookups":[""]}') as c`,
      [kid],
    );
    // The child's end wakes its parent (durable_wake_waiters); the parent's claim answers the race.
    await session.query("select durable_finish_run($1, $2, 'completed', '1', null, '[]', null)", [
      kid,
      Number(rows[0].c.run.fence),
    ]);
    await session.query(`select durable_claim_run('["lookups"]', $1, 60000, '[]', '{}', '{"lookups":[""]}') as c`, [
      parent.id,
    ]);
    const answered = await session.query(
      "select status, result from durable_steps where run_id = $1 and step_id = 'kid'",
      [parent.id],
    );
    expect(answered.rows[0]).toMatchObject({ status: "completed", result: { status: "completed", output: 1 } });
    await session.query("select durable_cancel_run($1, 'stop', 'cancel')", [parent.id]);
    await session.query("select durable_end_overdue($1, durable_now())", [kid]);
  }
  // The waiters were found and woken by id at every child's end (not a vacuous pass).
  expect(plans.filter((p) => p.includes("r.id = any (v_waiters)")).length).toBeGreaterThanOrEqual(2 * CALLS);
  expect(plans.filter((p) => p.includes("durable_runs_status_created"))).toEqual([]);
});

it("a rate-limited claim reads its window, queue and backlog by index, not the whole table (0010, 0012)", async () => {
  // CALLS keys, each with a long history (5,000 first claims long ago in all) and 25 runs due at
  // once, so every statement of the admission and of the hold runs at least CALLS times.
  await session.query(
    `insert into durable_runs (id, workflow, status, input, finished_at, rate_key, first_claimed_at, attempts)
     select 'lim-done-' || n, 'limited', 'completed', '{}', now(), 'k' || (n % ${CALLS}), now() - interval '1 day', 1
       from generate_series(1, 5000) n`,
  );
  await session.query(
    `insert into durable_runs (id, workflow, input, wake_at, rate_key)
     select 'lim-' || n, 'limited', '{}', durable_now(), 'k' || (n % ${CALLS})
       from generate_series(1, ${25 * CALLS}) n`,
  );
  await session.query("analyze durable_runs");
  plans.length = 0;
  const claimed: string[] = [];
  for (let i = 0; i < 200; i++) {
    const { rows } = await session.query(
      `select durable_claim_run('["limited"]', null, 60000, '[]', '{}', '{"limited":[""]}',
                                '{"limited":{"limit":5,"periodMs":60000}}') as c`,
    );
    if (rows[0].c === null) break;
    if (rows[0].c.run) claimed.push(rows[0].c.run.id);
  }
  const claimPlans = [...plans];
  // Five of each key started; the claim that met a full key held its whole due backlog at once.
  expect(claimed).toHaveLength(5 * CALLS);
  const held = await session.query(
    "select count(*)::int as n from durable_runs where workflow = 'limited' and rate_slot_at is not null",
  );
  expect(held.rows[0].n).toBe(20 * CALLS);
  // auto_explain prints each statement's text as written in the function, then its plan.
  const window = claimPlans.filter((p) => p.includes("first_claimed_at > p_now - v_period"));
  const queue = claimPlans.filter((p) => p.includes("rate_slot_at is not null"));
  const backlog = claimPlans.filter((p) => p.includes("wake_at <= p_now and id <> p_run.id"));
  const picks = claimPlans.filter((p) => p.includes("priority = v_prio and wake_at <= v_now"));
  expect(window.length).toBeGreaterThanOrEqual(6 * CALLS);
  expect(queue.length).toBeGreaterThanOrEqual(CALLS);
  expect(backlog.length).toBeGreaterThanOrEqual(CALLS);
  expect(picks.length).toBeGreaterThanOrEqual(2 * CALLS);
  expect(window.every((p) => p.includes("durable_runs_rate_claims"))).toBe(true);
  expect(queue.every((p) => p.includes("durable_runs_rate_queue"))).toBe(true);
  expect(backlog.every((p) => p.includes("durable_runs_rate_backlog"))).toBe(true);
  expect(picks.every((p) => p.includes("durable_runs_due_priority"))).toBe(true);
  expect(claimPlans.filter((p) => /Seq Scan on durable_runs/.test(p))).toEqual([]);
});
