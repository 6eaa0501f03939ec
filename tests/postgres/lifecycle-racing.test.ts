// Lifecycle hooks on the real server while tick loops race a cancelMany and a deadline
// (docs/guide/lifecycle.md; docs/sql.md, "Follow-ups"): whichever end wins a run (its body's, the
// cancel's, the deadline's), that end and no other starts the run's hook, exactly once, in the
// transaction that ended it; a run that ended never has a hook of another end.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow, lifecycleInput } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

const hook = defineWorkflow({
  name: "race-hook",
  input: lifecycleInput,
  async run(_ctx, ended) {
    return ended.status;
  },
});

const job = defineWorkflow({
  name: "race-job",
  input: z.object({ n: z.number() }),
  onComplete: hook,
  onFailure: hook,
  async run(ctx, input) {
    const a = await ctx.step.run("a", async () => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      return input.n;
    });
    return ctx.step.run("b", () => {
      if (input.n % 7 === 0) throw new Error("b failed");
      return a + 1;
    });
  },
});

const RUNS = 600;
const LOOPS = 4;
let url: string;
let admin: Kysely<any>;
let setup: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_lifecycle_racing");
  admin = await connect(url, { driver: "pg" });
  setup = createDurable({ db: admin, workflows: [job, hook], log: () => {} });
  await setup.migrate();
});
afterAll(async () => {
  await admin?.destroy();
});

it("each run's winning end starts its hook once, whichever of body, cancelMany and deadline wins", async () => {
  const ids = Array.from({ length: RUNS }, (_, n) => `r${n}`);
  await setup.startMany(
    job,
    ids.map((_, n) => ({ n })),
    { ids, tags: ["racing"] },
  );
  // A third of the runs with a deadline already close: a claim ends them as overdue.
  await sql`update durable_runs set deadline_at = now() + interval '50 milliseconds'
             where workflow = 'race-job' and (substr(id, 2))::int % 3 = 0`.execute(admin);
  const stop = { done: false };
  const instances = Array.from({ length: LOOPS }, () => connect(url, { driver: "pg" }));
  const loops = (await Promise.all(instances)).map(async (db) => {
    const durable = createDurable({
      db,
      workflows: [job, hook],
      tickConcurrency: 4,
      defaults: { lease: "2s" },
      log: () => {},
    });
    while (!stop.done) await durable.tick({ budgetMs: 5_000 });
    await durable.close();
  });
  // Cancel the runs tagged "racing" while the loops claim them.
  await until(async () => (await setup.list({ status: "completed", workflow: "race-job" })).runs.length > 20);
  const cancelled = await setup.cancelMany({ tag: "racing" }, { reason: "race" });
  await until(async () => (await setup.countDue()) === 0, 60_000);
  stop.done = true;
  await Promise.all(loops);

  const { rows } = await sql<{ id: string; status: string; fence: number; hooks: any[] }>`
    select r.id, r.status, r.fence,
           coalesce((select jsonb_agg(jsonb_build_object('id', h.id, 'status', h.input ->> 'status', 'done', h.status))
                       from durable_runs h where h.parent_id = r.id), '[]') as hooks
      from durable_runs r where r.workflow = 'race-job'`.execute(admin);
  expect(rows).toHaveLength(RUNS);
  const statuses = new Map<string, number>();
  for (const run of rows) {
    expect(["completed", "failed", "cancelled"]).toContain(run.status);
    statuses.set(run.status, (statuses.get(run.status) ?? 0) + 1);
    expect(run.hooks, run.id).toEqual([
      { id: `${run.id}~${run.status}~${run.fence}~1`, status: run.status, done: "completed" },
    ]);
  }
  // Every kind of end happened, so each path was raced.
  expect(statuses.get("cancelled")).toBe(cancelled.changed);
  expect(statuses.get("completed")).toBeGreaterThan(0);
  expect(statuses.get("failed")).toBeGreaterThan(0);
  const { rows: overdue } = await sql<{ n: number }>`
    select count(*)::int as n from durable_runs
     where workflow = 'race-job' and error ->> 'code' = 'deadline_exceeded'`.execute(admin);
  expect(overdue[0]!.n).toBeGreaterThan(0);
}, 120_000);
