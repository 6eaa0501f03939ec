// Scaling out (docs/guide/scaling-out.md, "Scaling out"): concurrent ticks, concurrency keys, singletons, worker mode,
// one suite run on every database. Racing instances on several connections live in
// tests/postgres/scale-racing.test.ts.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, RunStateConflictError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

/** Step bodies executing now, by a label: the most seen at once is what the suite asserts. */
class Overlap {
  private now = new Map<string, number>();
  readonly max = new Map<string, number>();
  async during<T>(label: string, ms: number, value: T): Promise<T> {
    const current = (this.now.get(label) ?? 0) + 1;
    this.now.set(label, current);
    this.max.set(label, Math.max(this.max.get(label) ?? 0, current));
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.now.set(label, this.now.get(label)! - 1);
    return value;
  }
  reset() {
    this.now.clear();
    this.max.clear();
  }
}

const overlap = new Overlap();

const slowCall = defineWorkflow({
  name: "slow-call",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step.run("call", () => overlap.during("all", 150, input.n * 2));
  },
});

const perTenant = defineWorkflow({
  name: "per-tenant",
  input: z.object({ tenant: z.string(), n: z.number() }),
  concurrency: { key: (input) => input.tenant, limit: 2 },
  async run(ctx, input) {
    await ctx.step.run("first", () => overlap.during(input.tenant, 60, 1));
    return ctx.step.run("second", () => overlap.during(input.tenant, 60, input.n));
  },
});

const branchReset = defineWorkflow({
  name: "branch-reset",
  input: z.object({ branch: z.string(), fail: z.boolean().default(false) }),
  singleton: { key: (input) => input.branch },
  signals: { go: z.object({}) },
  async run(ctx, input) {
    await ctx.step.waitForSignal("go");
    return ctx.step.run("reset", () => {
      if (input.fail) throw new Error("reset failed");
      return `reset ${input.branch}`;
    });
  },
});

/** How many times each step body ran, by `<run>/<step>`. */
const executions = new Map<string, number>();

const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ stepMs: z.number().default(0) }),
  async run(ctx, input) {
    let total = 0;
    for (const id of ["a", "b", "c"]) {
      total += await ctx.step.run(id, async () => {
        const key = `${ctx.runId}/${id}`;
        executions.set(key, (executions.get(key) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, input.stepMs));
        return 1;
      });
    }
    return total;
  },
});

// Parks for 800 ms (with in-process waits off): a worker must wake it by the clock.
const napper = defineWorkflow({
  name: "napper",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.sleep("nap", "800ms");
    return "rested";
  },
});

// A steady backlog: while `backlog.on`, every run starts the next one, so a worker with one loop
// always has a due run and never goes idle.
const backlog = { on: false, completed: 0, instance: undefined as Durable | undefined };
const busy = defineWorkflow({
  name: "busy",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("next", async () => {
      if (backlog.on) await backlog.instance!.start(busy, {});
    });
    backlog.completed++;
  },
});
const legacyV1 = defineWorkflow({ name: "legacy", version: 1, input: z.object({}), run: async () => "v1" });
const legacyV2 = defineWorkflow({ name: "legacy", version: 2, input: z.object({}), run: async () => "v2" });

export function runScaleContract(label: string, openDb: () => Promise<Kysely<any>>) {
  describe(`scaling out (${label})`, () => {
    let db: Kysely<any>;
    let durable: Durable;

    beforeAll(async () => {
      db = await openDb();
      durable = createDurable({
        db,
        workflows: [slowCall, perTenant, branchReset, threeSteps],
        tickConcurrency: 8,
        defaults: { lease: "5s" },
      });
      await durable.migrate();
    });
    afterAll(() => durable?.close());
    beforeEach(async () => {
      await resetDurableTables(db);
      overlap.reset();
    });

    it("a tick advances tickConcurrency runs at once: their I/O overlaps", async () => {
      for (let n = 0; n < 16; n++) await durable.start(slowCall, { n }, { id: `slow-${n}` });
      expect(await durable.countDue()).toBe(16);
      expect(await durable.countDue({ max: 5 })).toBe(5);
      const report = await durable.tick({ budgetMs: 30_000 });
      expect(report).toMatchObject({ claimed: 16, completed: 16 });
      expect(overlap.max.get("all")).toBe(8);
      expect(await durable.countDue()).toBe(0);
      // One loop: one at a time.
      for (let n = 0; n < 3; n++) await durable.start(slowCall, { n }, { id: `serial-${n}` });
      overlap.reset();
      expect(await durable.tick({ budgetMs: 30_000, concurrency: 1 })).toMatchObject({ completed: 3 });
      expect(overlap.max.get("all")).toBe(1);
    });

    it("refuses a tickConcurrency outside 1–64", () => {
      for (const tickConcurrency of [0, 65, 1.5]) {
        expect(() => createDurable({ db, workflows: [], tickConcurrency })).toThrow(
          /tickConcurrency is a whole number/,
        );
      }
    });

    it("holds a concurrency key to its limit; the rest wait their turn, other keys go on", async () => {
      for (let n = 0; n < 6; n++) await durable.start(perTenant, { tenant: "acme", n }, { id: `acme-${n}` });
      await durable.start(perTenant, { tenant: "globex", n: 0 }, { id: "globex-0" });
      const first = await durable.tick({ budgetMs: 30_000 });
      // Every run completes within the one tick: a loop that finds acme full takes the next free run.
      expect(first.completed).toBe(7);
      expect(overlap.max.get("acme")).toBe(2);
      expect(overlap.max.get("globex")).toBe(1);
      const { rows } = await sql<{ concurrency_key: string }>`
        select distinct concurrency_key from durable_runs where workflow = 'per-tenant' order by 1`.execute(db);
      expect(rows.map((row) => row.concurrency_key)).toEqual(["acme", "globex"]);
    });

    it("takes the oldest run of a full key first once a slot frees", async () => {
      for (let n = 0; n < 4; n++) await durable.start(perTenant, { tenant: "solo", n }, { id: `solo-${n}` });
      // Two loops, as many as the key's limit: both first claims succeed whichever takes the key's
      // lock first (with more loops than the limit, a younger run's loop may win a slot first).
      await durable.tick({ budgetMs: 30_000, concurrency: 2 });
      // When each run's first step began and when the run finished, by the database clock: the
      // order of claims, which a slow machine does not change (the order of ends it may).
      const { rows } = await sql<{ id: string; began: Date; finished: Date }>`
        select r.id, s.started_at as began, r.finished_at as finished from durable_runs r
          join durable_steps s on s.run_id = r.id and s.step_id = 'first'
         where r.workflow = 'per-tenant' order by s.started_at, r.id`.execute(db);
      // Two at a time, oldest first: 0 and 1 at once; 2 and 3 only once one of them ended.
      expect(
        rows
          .slice(0, 2)
          .map((row) => row.id)
          .sort(),
      ).toEqual(["solo-0", "solo-1"]);
      const firstEnd = Math.min(rows[0]!.finished.getTime(), rows[1]!.finished.getTime());
      for (const later of rows.slice(2)) expect(later.began.getTime()).toBeGreaterThanOrEqual(firstEnd);
    });

    it("refuses a second active run of a singleton key, naming the active one", async () => {
      await durable.start(branchReset, { branch: "main" }, { id: "reset-1" });
      await durable.tick({ budgetMs: 10_000 }); // waiting for "go"
      const refused = await durable.start(branchReset, { branch: "main" }, { id: "reset-2" }).catch((e) => e);
      expect(RunStateConflictError.is(refused)).toBe(true);
      expect(refused.activeRunId).toBe("reset-1");
      expect(refused.message).toContain('"reset-1"');
      expect(await durable.status("reset-2")).toBeNull(); // nothing written
      // The same id again is the idempotent start, not a conflict; another key is free.
      expect((await durable.start(branchReset, { branch: "main" }, { id: "reset-1" })).created).toBe(false);
      expect((await durable.start(branchReset, { branch: "dev" }, { id: "reset-dev" })).created).toBe(true);
      // Once the active run finished, the key is free again.
      await durable.signal({ runId: "reset-1", name: "go", payload: {} });
      await durable.tick({ budgetMs: 10_000 });
      expect((await durable.status("reset-1"))!.status).toBe("completed");
      expect((await durable.start(branchReset, { branch: "main" }, { id: "reset-2" })).created).toBe(true);
    });

    it("refuses to retry a failed singleton run while another run holds its key", async () => {
      await durable.start(branchReset, { branch: "rel", fail: true }, { id: "rel-1" });
      await durable.signal({ runId: "rel-1", name: "go", payload: {} });
      await durable.tick({ budgetMs: 10_000 });
      expect((await durable.status("rel-1"))!.status).toBe("failed");
      await durable.start(branchReset, { branch: "rel" }, { id: "rel-2" });
      const refused = await durable.retry("rel-1").catch((e) => e);
      expect(RunStateConflictError.is(refused)).toBe(true);
      expect(refused.activeRunId).toBe("rel-2");
      expect((await durable.status("rel-1"))!.status).toBe("failed"); // unchanged
      await durable.cancel("rel-2");
      expect((await durable.retry("rel-1")).status).toBe("pending");
    });

    it("refuses keys a workflow cannot store, and bad options at definition", async () => {
      const badKey = defineWorkflow({
        name: "bad-key",
        input: z.object({}),
        concurrency: { key: () => "", limit: 1 },
        run: async () => 1,
      });
      const instance = createDurable({ db, workflows: [badKey] });
      await expect(instance.start(badKey, {})).rejects.toThrow(/concurrency.key must return a string/);
      expect(() =>
        defineWorkflow({
          name: "x",
          input: z.object({}),
          concurrency: { key: () => "k", limit: 0 },
          run: async () => 1,
        }),
      ).toThrow(/limit: a whole number >= 1/);
    });

    it("worker mode: drains what is due, wakes when a run is started, gives runs back when stopped", async () => {
      const stop = new AbortController();
      const working = durable.work({ concurrency: 4, signal: stop.signal, pollMs: 60_000 });
      await durable.start(threeSteps, {}, { id: "w-1" });
      // Woken by the notification, not the 60 s poll (the wait is generous for a loaded machine).
      await until(async () => (await durable.status("w-1"))?.status === "completed", 20_000);
      // A run stopped mid-way: its steps so far are kept, the rest wait for the next worker.
      await durable.start(threeSteps, { stepMs: 300 }, { id: "w-2" });
      await until(async () => executions.get("w-2/a") === 1, 20_000);
      stop.abort();
      const report = await working;
      expect(report).toMatchObject({ listening: true, completed: 1, yielded: 1 });
      const left = (await durable.status("w-2"))!;
      // Given back, due now, holding no lease; the step in flight when it stopped was recorded.
      expect(left.status).toBe("pending");
      expect(left.steps.map((step) => step.id)).toEqual(["a"]);
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from durable_runs where lease_until is not null`.execute(db);
      expect(rows[0]!.n).toBe(0);
      // The next worker finishes it without running a step twice.
      const again = new AbortController();
      const next = durable.work({ concurrency: 2, signal: again.signal });
      await until(async () => (await durable.status("w-2"))?.status === "completed", 20_000);
      again.abort();
      expect((await next).completed).toBe(1);
      expect(["a", "b", "c"].map((id) => executions.get(`w-2/${id}`))).toEqual([1, 1, 1]);
    });

    it("worker mode: wakes a parked run at its wake time, with no notification", async () => {
      const parking = createDurable({ db, workflows: [napper], defaults: { inProcessWait: "0ms" } });
      const stop = new AbortController();
      const working = parking.work({ concurrency: 4, signal: stop.signal, pollMs: 60_000 });
      await parking.start(napper, {}, { id: "nap-1" });
      await until(async () => (await parking.status("nap-1"))?.status === "completed", 20_000);
      stop.abort();
      expect(await working).toMatchObject({ claimed: 2, waiting: 1, completed: 1 });
    });

    it("worker mode: refuses a concurrency outside 1–1000", async () => {
      await expect(durable.work({ concurrency: 0 })).rejects.toThrow(/concurrency is a whole number/);
      await expect(durable.work({ housekeepingMs: 50 })).rejects.toThrow(/housekeepingMs is a number of ms/);
    });

    it("worker mode: does its housekeeping on a timer while a steady backlog keeps it busy", async () => {
      // A run of a version this deployment does not have: housekeeping fails it (unknownVersion "fail").
      await createDurable({ db, workflows: [legacyV1] }).start(legacyV1, {}, { id: "legacy-1" });
      const worker = createDurable({ db, workflows: [busy, legacyV2], unknownVersion: "fail" });
      Object.assign(backlog, { on: true, completed: 0, instance: worker });
      for (let n = 0; n < 3; n++) await worker.start(busy, {});
      const stop = new AbortController();
      const working = worker.work({ concurrency: 1, signal: stop.signal, housekeepingMs: 200 });
      try {
        // Before, housekeeping ran only when a loop went idle: never, while the backlog lasted.
        await until(async () => (await worker.status("legacy-1"))?.status === "failed", 15_000);
        expect((await worker.status("legacy-1"))!.error).toMatchObject({ code: "unknown_version" });
        // Busy all along: the backlog is still there, and it was being drained.
        expect(await worker.countDue()).toBeGreaterThan(0);
        expect(backlog.completed).toBeGreaterThan(0);
      } finally {
        backlog.on = false;
        stop.abort();
        await working;
      }
    });
  });
}
