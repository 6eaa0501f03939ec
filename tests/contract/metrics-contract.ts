// durable.metrics() (docs/guide/metrics.md): one statement's figures over live runs, the runs
// finished in the window, due backlog, expired leases, waits by kind, steps and retries, on every
// database.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, FatalStepError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const napper = defineWorkflow({
  name: "napper",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("a", () => 1);
    await ctx.step.sleep("nap", "1h");
  },
});

const asker = defineWorkflow({
  name: "asker",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.waitForSignal("go");
  },
});

const wobbly = defineWorkflow({
  name: "wobbly",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run(
      "w",
      (s) => {
        if (s.attempt < 3) throw new Error(`attempt ${s.attempt} fails`);
        return s.attempt;
      },
      { retries: 2, retryDelay: "1ms" },
    );
  },
});

const doomed = defineWorkflow({
  name: "doomed",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("boom", () => {
      throw new FatalStepError("no");
    });
  },
});

export function runMetricsContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`metrics on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    // Ticks until every listed run has finished or parked for good (a retry's short delay parks too).
    const tickUntilSettled = (ids: Record<string, string>) =>
      until(async () => {
        await durable.tick({ budgetMs: 10_000 });
        for (const [id, status] of Object.entries(ids)) {
          if ((await durable.status(id))?.status !== status) return false;
        }
        return true;
      });

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows: [napper, asker, wobbly, doomed],
        secrets: { durable: "t" },
        testing: true,
        defaults: { lease: "2s" },
        log: () => {},
      });
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
    });

    it("answers zeros and empty lists on an empty database", async () => {
      expect(await durable.metrics()).toEqual({
        windowSeconds: 300,
        runs: [],
        finished: [],
        due: 0,
        oldestDueSeconds: 0,
        expiredLeases: 0,
        waits: [],
        steps: [],
      });
    });

    it("counts live runs, the window's finished runs, due runs, lost leases, waits, steps and retries", async () => {
      for (const [workflow, id] of [
        [napper, "n1"],
        [asker, "a1"],
        [wobbly, "w1"],
        [doomed, "d1"],
      ] as const) {
        await durable.start(workflow, {}, { id });
      }
      await tickUntilSettled({ n1: "waiting", a1: "waiting", w1: "completed", d1: "failed" });
      await durable.start(napper, {}, { id: "n2" }); // pending and due, never ticked
      // A workflow this instance does not register, due for 90 s; a run whose owner was lost 30 s
      // ago; and a run finished an hour ago, with a step of 5 attempts, outside the window.
      await sql`
        insert into durable_runs (id, workflow, status, input, wake_at)
        values ('ghost', 'ghost-flow', 'pending', '{}', durable_now() - interval '90 seconds')`.execute(db);
      await sql`
        insert into durable_runs (id, workflow, status, input, wake_at, lease_until)
        values ('lost', 'napper', 'running', '{}', durable_now() - interval '30 seconds',
                durable_now() - interval '30 seconds')`.execute(db);
      await sql`
        insert into durable_runs (id, workflow, status, input, finished_at)
        values ('old', 'wobbly', 'completed', '{}', durable_now() - interval '1 hour')`.execute(db);
      await sql`
        insert into durable_steps (run_id, step_id, seq, kind, status, attempt, fence)
        values ('old', 's', 0, 'run', 'completed', 5, 0)`.execute(db);

      const read = await durable.metrics();
      expect(read.runs).toEqual([
        { workflow: "asker", status: "waiting", count: 1 },
        { workflow: "napper", status: "pending", count: 1 },
        { workflow: "napper", status: "running", count: 1 },
        { workflow: "napper", status: "waiting", count: 1 },
        { workflow: null, status: "pending", count: 1 },
      ]);
      expect(read.finished).toEqual([
        { workflow: "doomed", status: "failed", count: 1 },
        { workflow: "wobbly", status: "completed", count: 1 },
      ]);
      expect(read.due).toBe(3); // n2, ghost and lost
      expect(read.oldestDueSeconds).toBeGreaterThanOrEqual(90);
      expect(read.oldestDueSeconds).toBeLessThan(120);
      expect(read.expiredLeases).toBe(1);
      expect(read.waits).toEqual([
        { kind: "signal", count: 1 },
        { kind: "sleep", count: 1 },
      ]);
      expect(read.steps).toEqual([
        { workflow: "asker", steps: 1, retries: 0 },
        { workflow: "doomed", steps: 1, retries: 0 },
        { workflow: "napper", steps: 2, retries: 0 },
        { workflow: "wobbly", steps: 1, retries: 2 },
      ]);

      // Six minutes on, the finished runs have left the window and their steps with them; the
      // sleeps of an hour still wait, and every run not finished is now due for longer.
      await durable.testing.advanceClock("6m");
      const later = await durable.metrics();
      expect(later.finished).toEqual([]);
      expect(later.steps).toEqual([
        { workflow: "asker", steps: 1, retries: 0 },
        { workflow: "napper", steps: 2, retries: 0 },
      ]);
      expect(later.oldestDueSeconds).toBeGreaterThanOrEqual(90 + 360);
      expect(later.runs).toEqual(read.runs);
    });

    it("keeps the workflow labels bounded: unregistered workflows count together under null", async () => {
      await sql`
        insert into durable_runs (id, workflow, status, input, wake_at)
        select 'x-' || n, 'stranger-' || n, 'waiting', '{}', 'infinity' from generate_series(1, 500) n`.execute(db);
      await sql`
        insert into durable_runs (id, workflow, status, input, finished_at)
        select 'y-' || n, 'stranger-' || n, 'cancelled', '{}', durable_now() from generate_series(1, 500) n`.execute(
        db,
      );
      const read = await durable.metrics();
      expect(read.runs).toEqual([{ workflow: null, status: "waiting", count: 500 }]);
      expect(read.finished).toEqual([{ workflow: null, status: "cancelled", count: 500 }]);
      expect(read.due).toBe(0);
    });

    it("refuses a closed instance", async () => {
      const other = createDurable({ db: await open(), workflows: [napper], secrets: { durable: "t" }, log: () => {} });
      await other.close();
      await expect(other.metrics()).rejects.toThrow(/closed/);
    });
  });
}
