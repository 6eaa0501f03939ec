// An end looks up the runs waiting on it by the partial GIN index (durable_steps_waiting_on_runs),
// inline in durable_finish_run since function set 25, and calls durable_wake_waiters only when it
// finds one (docs/sql.md, "durable_finish_run"). plpgsql keeps a session's plans: one made while
// durable_steps was analyzed empty (a new install) would read the whole table at every end, so the
// function runs with enable_seqscan off. auto_explain prints the plan of each nested statement.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { collectNestedPlans } from "../helpers/nested-plans";

const CALLS = 8; // plpgsql plans a statement for its arguments 5 times, then may keep a generic plan

const flow = defineWorkflow({ name: "ends", input: z.object({}), run: async () => null });

let url: string;
let admin: Durable;
let session: pg.Client;
let plans: string[] = [];
beforeAll(async () => {
  url = await createTestDatabase("durable_end_waiter_lookup");
  admin = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [flow], secrets: { durable: "t" } });
  await admin.migrate();
  for (let i = 0; i < 2 * CALLS; i++) await admin.start(flow, {}, { id: `r-${i}` });
  session = new pg.Client({ connectionString: url });
  await session.connect();
  // Analyzed empty, as on a new install, and the session's first ends planned so; then steps the
  // statistics do not know of.
  await session.query("analyze durable_steps");
  for (let i = CALLS; i < 2 * CALLS; i++) await end(`r-${i}`);
  await session.query(
    `insert into durable_runs (id, workflow, status, input, finished_at)
     select 'done-' || n, 'ends', 'completed', '{}', now() from generate_series(1, 2000) n;
     insert into durable_steps (run_id, step_id, seq, kind, status, attempt, fence)
     select 'done-' || n, 's', 0, 'run', 'completed', 1, 1 from generate_series(1, 2000) n`,
  );
  plans = await collectNestedPlans(session);
});
afterAll(async () => {
  await session?.end();
  await admin?.close();
});

/** Claims run `id` and ends it as a tick does (durable_finish_and_claim, claiming nothing next). */
async function end(id: string) {
  const { rows } = await session.query(`select durable_claim_run('["ends"]', $1, 60000, '[]') as c`, [id]);
  const ended = await session.query(
    `select durable_finish_and_claim($1, $2::bigint, 'completed', 'null', null, '[]', null,
                                     '["none"]', 60000, '[]', '{}', null, '{}', true) as answer`,
    [id, Number(rows[0].c.run.fence)],
  );
  expect(ended.rows[0].answer.finished).toBe("finished");
}

it("each end finds its waiters by the GIN index, never by reading durable_steps whole", async () => {
  for (let i = 0; i < CALLS; i++) await end(`r-${i}`);
  const lookups = plans.filter((p) => p.includes("target_runs @>"));
  expect(lookups.length).toBeGreaterThanOrEqual(CALLS);
  expect(lookups.every((p) => p.includes("durable_steps_waiting_on_runs"))).toBe(true);
  expect(plans.filter((p) => p.includes("Seq Scan on durable_steps"))).toEqual([]);
  // No run waits on these: durable_wake_waiters was never called.
  expect(plans.filter((p) => p.includes("durable_wake_waiters("))).toEqual([]);
});
