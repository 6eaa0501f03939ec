// Operations on the real server while 8 tick loops race (docs/guide/runs.md, "Acting on many runs",
// "Finding runs", "Forking a run"): cancelMany over 10,000 runs the loops are claiming changes each
// once, leaves none of them non-terminal, and no owner writes past its cancel; list pages stay
// exact while runs are inserted and change status between pages; a fork replays its copied
// receipts (their bodies do not run) and runs the rest.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

const executions = new Map<string, number>();
const bump = (key: string) => executions.set(key, (executions.get(key) ?? 0) + 1);
let failLast = true;

const job = defineWorkflow({
  name: "ops-job",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    ctx.setMetadata({ n: input.n % 10 });
    const a = await ctx.step.run("a", async () => {
      bump(`${ctx.runId}:a`);
      await new Promise((resolve) => setTimeout(resolve, 2));
      return input.n;
    });
    const b = await ctx.step.run("b", async () => {
      bump(`${ctx.runId}:b`);
      await new Promise((resolve) => setTimeout(resolve, 2));
      return a + 1;
    });
    return ctx.step.run("c", () => {
      bump(`${ctx.runId}:c`);
      if (input.n < 0 && failLast) throw new Error("c failed");
      return b + 1;
    });
  },
});

const RUNS = 10_000;
const LOOPS = 8;
let url: string;
let admin: Kysely<any>;
let setup: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_operations_racing");
  admin = await connect(url, { driver: "pg" });
  setup = createDurable({ db: admin, workflows: [job], secrets: { durable: "t" }, log: () => {} });
  await setup.migrate();
});
afterAll(async () => {
  await admin?.destroy();
});

/** `LOOPS` instances, each its own pool, each ticking until `stop` is set. */
async function tickLoops(stop: { done: boolean }) {
  const instances: Durable[] = [];
  for (let i = 0; i < LOOPS; i++) {
    instances.push(
      createDurable({
        db: await connect(url, { driver: "pg", poolSize: 3 }),
        workflows: [job],
        secrets: { durable: "t" },
        tickConcurrency: 4,
        log: () => {},
      }),
    );
  }
  const loops = instances.map(async (instance) => {
    while (!stop.done) await instance.tick({ budgetMs: 40_000 });
  });
  return async () => {
    stop.done = true;
    await Promise.all(loops);
    await Promise.all(instances.map((instance) => instance.close()));
  };
}

it(`cancelMany over ${RUNS} runs while ${LOOPS} tick loops claim them changes each once`, async () => {
  for (let at = 0; at < RUNS; at += 1000) {
    const inputs = Array.from({ length: 1000 }, (_, n) => ({ n: at + n }));
    await setup.startMany(job, inputs, { ids: inputs.map(({ n }) => `job-${n}`), tags: ["wave"] });
  }
  const stop = { done: false };
  const stopLoops = await tickLoops(stop);
  // Let the loops get going, so the cancels meet runs being claimed, mid-step and finishing.
  await until(async () => (await setup.list({ tag: "wave", status: "completed", limit: 200 })).runs.length >= 200);
  const result = await setup.cancelMany({ tag: "wave" }, { reason: "wave recalled" });
  await stopLoops();

  const { rows } = await sql<{ status: string; runs: number; cancels: number; late: number }>`
    select r.status, count(*)::int as runs,
           coalesce(sum((select count(*) from durable_events e where e.run_id = r.id and e.kind = 'cancel')), 0)::int
             as cancels,
           coalesce(sum((select count(*) from durable_steps s, durable_events e
                          where s.run_id = r.id and e.run_id = r.id and e.kind = 'cancel'
                            and s.updated_at > e.created_at)), 0)::int as late
      from durable_runs r where 'wave' = any (r.tags) group by r.status`.execute(admin);
  const by = Object.fromEntries(rows.map((row) => [row.status, row]));
  // Every run ended: cancelled by this call, or completed before its batch locked it.
  expect(Object.keys(by).sort()).toEqual(["cancelled", "completed"]);
  expect(by.cancelled!.runs + by.completed!.runs).toBe(RUNS);
  // Each cancelled run was cancelled once, by this call, and none of the others was.
  expect(result.changed).toBe(by.cancelled!.runs);
  expect(by.cancelled!.cancels).toBe(by.cancelled!.runs);
  expect(by.completed!.cancels).toBe(0);
  expect(result.matched).toBeGreaterThanOrEqual(result.changed);
  expect(result.matched).toBeLessThanOrEqual(RUNS);
  // No owner wrote a receipt after its run's cancel: the fence refused it.
  expect(by.cancelled!.late).toBe(0);
  expect(by.completed!.runs).toBeGreaterThanOrEqual(200);
  expect(by.cancelled!.runs).toBeGreaterThan(0);
  // Completed runs ran each step once.
  const { rows: done } = await sql<{ id: string }>`
    select id from durable_runs where status = 'completed' and 'wave' = any (tags)`.execute(admin);
  for (const { id } of done) {
    for (const step of ["a", "b", "c"]) expect(executions.get(`${id}:${step}`)).toBe(1);
  }
  expect(await setup.cancelMany({ tag: "wave" })).toEqual({ matched: 0, changed: 0 });
}, 240_000);

it("list pages stay exact while runs are inserted and change status between pages", async () => {
  const inputs = Array.from({ length: 600 }, (_, n) => ({ n: 20_000 + n }));
  await setup.startMany(job, inputs, { ids: inputs.map(({ n }) => `page-${n}`), tags: ["paged"] });
  const stop = { done: false };
  const stopLoops = await tickLoops(stop);
  const seen: string[] = [];
  let cursor: string | undefined;
  let late = 0;
  do {
    const page = await setup.list({ tag: "paged", limit: 50, cursor });
    seen.push(...page.runs.map((run) => run.id));
    cursor = page.nextCursor ?? undefined;
    await setup.start(job, { n: 30_000 + late }, { id: `page-late-${late++}`, tags: ["paged"] });
  } while (cursor);
  await stopLoops();
  // Every run of the first page's moment, newest first, each once, whatever its status became.
  expect(seen).toEqual(inputs.map(({ n }) => `page-${n}`).reverse());
}, 120_000);

it("a fork replays the copied receipts without running their bodies and runs the rest", async () => {
  await setup.start(job, { n: -5 }, { id: "fork-src" });
  await until(async () => {
    await setup.tick({ budgetMs: 40_000 });
    return (await setup.status("fork-src"))?.status === "failed";
  });
  expect([executions.get("fork-src:a"), executions.get("fork-src:b"), executions.get("fork-src:c")]).toEqual([1, 1, 1]);
  failLast = false;
  const forked = await setup.fork("fork-src", { fromStep: "c", id: "fork-new" });
  expect(forked.created).toBe(true);
  const stop = { done: false };
  const stopLoops = await tickLoops(stop);
  await until(async () => (await setup.status("fork-new"))?.status === "completed");
  await stopLoops();
  expect(await setup.status("fork-new")).toMatchObject({
    output: -3,
    forkedFrom: { runId: "fork-src", stepId: "c" },
    metadata: { n: -5 },
  });
  expect(executions.has("fork-new:a")).toBe(false);
  expect(executions.has("fork-new:b")).toBe(false);
  expect(executions.get("fork-new:c")).toBe(1);
  expect((await setup.status("fork-src"))!.status).toBe("failed");
}, 120_000);
