// ctx.continueAsNew (docs/guide/continue-as-new.md), on every database: a chain of runs,
// each ended as completed with `continuedAs` and its successor inserted in the same statement
// under the fence. The SIGKILL between the statements is in tests/postgres/continue-sigkill.test.ts.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, InvalidInputError, RunStateConflictError, type Durable } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const effects = new Map<string, number>();
const count = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);
// A body held before its continueAsNew until the test opens it: `held` is set when it gets there.
const holds = new Map<string, Promise<void>>();
const held = new Set<string>();

const counter = defineWorkflow({
  name: "counter",
  input: z.object({ n: z.number().int(), until: z.number().int() }),
  output: z.object({ done: z.number() }),
  async run(ctx, input) {
    await ctx.step.run("work", () => count(`${ctx.runId}:work`));
    const hold = holds.get(ctx.runId);
    if (hold) {
      held.add(ctx.runId);
      await hold;
    }
    if (input.n < input.until) return ctx.continueAsNew({ n: input.n + 1, until: input.until });
    return { done: input.n };
  },
});

const picky = defineWorkflow({
  name: "picky",
  input: z.object({ n: z.number(), catch: z.boolean() }),
  async run(ctx, input) {
    try {
      await ctx.continueAsNew({ n: "one" } as never);
    } catch (error) {
      if (input.catch && InvalidInputError.is(error)) return { caught: error.message };
      throw error;
    }
    return "unreachable";
  },
});

const nested = defineWorkflow({
  name: "nested",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    await ctx.step.run("inside", () => ctx.continueAsNew({ n: input.n + 1 }));
    return "unreachable";
  },
});

const solo = defineWorkflow({
  name: "solo-loop",
  input: z.object({ key: z.string(), n: z.number() }),
  singleton: { key: (input: { key: string }) => input.key },
  concurrency: { key: (input: { key: string }) => input.key, limit: 1 },
  async run(ctx, input) {
    if (input.n === 0) return ctx.continueAsNew({ key: `${input.key}-changed`, n: 1 });
    await ctx.step.waitForSignal("go");
    return "done";
  },
});

const parent = defineWorkflow({
  name: "chain-parent",
  input: z.object({ until: z.number() }),
  async run(ctx, input) {
    const out = await ctx.step.invoke("loop", counter, { n: 0, until: input.until });
    return out;
  },
});

// Continues once, then waits for a signal: a link that is running (waiting) while its parent acts.
const waiter = defineWorkflow({
  name: "chain-waiter",
  input: z.object({ n: z.number() }),
  deadline: "1h",
  async run(ctx, input) {
    if (input.n === 0) return ctx.continueAsNew({ n: 1 });
    await ctx.step.waitForSignal("go");
    return "done";
  },
});

const patientParent = defineWorkflow({
  name: "chain-patient",
  input: z.object({ timeout: z.string().optional() }),
  async run(ctx, input) {
    try {
      return await ctx.step.invoke("w", waiter, { n: 0 }, input.timeout ? { timeout: input.timeout } : {});
    } catch (error) {
      return { failed: (error as Error).name };
    }
  },
});

const workflows = [counter, picky, nested, solo, parent, waiter, patientParent];

export function runContinueAsNewContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`continueAsNew on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    const tick = () => durable.tick({ budgetMs: 10_000 });
    const drain = async () => {
      for (let i = 0; i < 30 && (await durable.countDue()) > 0; i++) await tick();
    };
    const runRow = async (id: string) =>
      (await sql<any>`select * from durable_runs where id = ${id}`.execute(db)).rows[0];
    const successors = async (id: string) =>
      (await sql<{ n: number }>`select count(*)::int as n from durable_runs where continued_from = ${id}`.execute(db))
        .rows[0]!.n;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows, secrets: { durable: "t" }, defaults: { lease: "2s" }, log: () => {} });
      await durable.migrate();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      effects.clear();
      holds.clear();
      held.clear();
    });
    afterAll(async () => durable?.close());

    it("a chain of 3: each completed with continuedAs, the last with the output; tags, priority carried", async () => {
      await durable.start(counter, { n: 0, until: 2 }, { id: "c", tags: ["poll", "team-a"], priority: 5 });
      await drain();
      const first = await durable.status("c");
      expect(first).toMatchObject({ status: "completed", output: null, continuedAs: "c~1", continuedFrom: null });
      expect(await durable.status("c~1")).toMatchObject({
        status: "completed",
        output: null,
        continuedAs: "c~2",
        continuedFrom: "c",
        tags: ["poll", "team-a"],
      });
      const last = await durable.status("c~2");
      expect(last).toMatchObject({ status: "completed", output: { done: 2 }, continuedAs: null, continuedFrom: "c~1" });
      // A fresh ledger: each run has its own "work" receipt, run once.
      expect(last?.steps.map((step) => step.id)).toEqual(["work"]);
      expect([...effects.entries()]).toEqual([
        ["c:work", 1],
        ["c~1:work", 1],
        ["c~2:work", 1],
      ]);
      expect((await runRow("c~2")).priority).toBe(5);
      expect((await runRow("c~2")).input).toEqual({ n: 2, until: 2 });
      const listed = await durable.list({ tag: "team-a" });
      expect(listed.runs.map((run) => run.id).sort()).toEqual(["c", "c~1", "c~2"]);
    });

    it("a stale owner starts no successor: the run continued once, by the owner that took it over", async () => {
      let open!: () => void;
      holds.set("s", new Promise<void>((resolve) => (open = resolve)));
      await durable.start(counter, { n: 0, until: 1 }, { id: "s" });
      const stale = tick();
      await until(() => held.has("s"));
      holds.delete("s");
      // The first owner's lease runs out; the next claim takes the run over and replays it.
      await durable.testing.advanceClock("1m");
      expect(await durable.advance("s")).toBe("completed");
      open();
      await stale;
      expect((await runRow("s")).continued_as).toBe("s~1");
      expect(await successors("s")).toBe(1);
      // The stale end was refused: its held-back receipt met the new owner's (noted as a conflict).
      const events = await sql<any>`select kind, fence from durable_events where run_id = 's' order by id`.execute(db);
      expect(events.rows).toEqual(
        expect.arrayContaining([expect.objectContaining({ kind: "step.outcome-conflict", fence: 1 })]),
      );
      // A replay of the finished run starts nothing: it is never claimed again.
      expect(await durable.advance("s")).toBeNull();
      await drain();
      expect(await durable.status("s~1")).toMatchObject({ status: "completed", output: { done: 1 } });
      expect(await successors("s")).toBe(1);
    });

    it("bad input: a clear InvalidInputError before anything is written; the run is left to its body", async () => {
      await durable.start(picky, { n: 1, catch: true }, { id: "p-caught" });
      await durable.start(picky, { n: 1, catch: false }, { id: "p-thrown" });
      await drain();
      const caught = await durable.status("p-caught");
      expect(caught).toMatchObject({ status: "completed", continuedAs: null });
      expect((caught!.output as { caught: string }).caught).toMatch(
        /^ctx\.continueAsNew: the input of workflow "picky" is invalid; the run was left as it is$/,
      );
      expect(await durable.status("p-thrown")).toMatchObject({
        status: "failed",
        continuedAs: null,
        error: { code: "invalid_input" },
      });
      expect(await runRow("p-caught~1")).toBeUndefined();
      expect(await runRow("p-thrown~1")).toBeUndefined();
      // From inside a step's function: the step fails with it (not retried), and nothing is started.
      await durable.start(nested, { n: 0 }, { id: "nest" });
      await drain();
      const nest = await durable.status("nest");
      expect(nest).toMatchObject({ status: "failed", continuedAs: null, error: { code: "invalid_input" } });
      expect(nest?.error?.message).toMatch(/1 step\(s\) in flight; .* never from inside a step's function/);
      expect(await runRow("nest~1")).toBeUndefined();
    });

    it("the singleton and concurrency keys pass to the successor, whatever its input, with no window", async () => {
      await durable.start(solo, { key: "k", n: 0 }, { id: "solo" });
      await drain();
      expect(await runRow("solo~1")).toMatchObject({
        status: "waiting",
        singleton_key: "k",
        concurrency_key: "k",
        continued_from: "solo",
      });
      // The key is held by the successor: a second start is refused, naming it.
      const refused = await durable.start(solo, { key: "k", n: 5 }, { id: "other" }).catch((error) => error);
      expect(RunStateConflictError.is(refused)).toBe(true);
      expect(refused.activeRunId).toBe("solo~1");
      await durable.signal({ runId: "solo~1", name: "go" });
      await drain();
      expect((await durable.status("solo~1"))?.status).toBe("completed");
      expect((await durable.start(solo, { key: "k", n: 5 }, { id: "other" })).created).toBe(true);
    });

    it("a parent's invoke waits for the end of the chain and answers its last run's output", async () => {
      await durable.start(parent, { until: 2 }, { id: "par" });
      await drain();
      expect(await durable.status("par")).toMatchObject({ status: "completed", output: { done: 2 } });
      expect(await runRow("par/loop~2")).toMatchObject({ parent_id: "par", status: "completed" });
      expect((await runRow("par/loop~1")).parent_id).toBe("par");
      // The invoke's row names the run it answered from.
      const step =
        await sql<any>`select target_runs from durable_steps where run_id = 'par' and step_id = 'loop'`.execute(db);
      expect(step.rows[0].target_runs).toEqual(["par/loop~2"]);
    });

    it("a parent's cancel reaches the chain's running link; an invoke's timeout cancels the link then", async () => {
      await durable.start(patientParent, {}, { id: "pc" });
      await durable.start(patientParent, { timeout: "10m" }, { id: "pt" });
      await drain();
      expect(await runRow("pc/w~1")).toMatchObject({ status: "waiting", parent_id: "pc" });
      // The parent parked again on the link its wait moved to (the first end woke it; it found the wait open).
      expect(await runRow("pc")).toMatchObject({ status: "waiting" });
      await durable.cancel("pc", "stop the loop");
      expect((await durable.status("pc/w~1"))?.status).toBe("cancelled");
      await durable.testing.advanceClock("11m");
      await drain();
      expect(await durable.status("pt")).toMatchObject({ status: "completed", output: { failed: "StepTimeoutError" } });
      await until(async () => (await durable.status("pt/w~1"))?.status === "cancelled");
    });

    it("the successor's deadline is its workflow's own, counted from its start", async () => {
      await durable.start(waiter, { n: 0 }, { id: "dl" });
      await drain();
      const first = await runRow("dl");
      const next = await runRow("dl~1");
      expect(next.status).toBe("waiting");
      expect(new Date(next.deadline_at).getTime() - new Date(next.created_at).getTime()).toBe(3_600_000);
      expect(new Date(next.deadline_at).getTime()).toBeGreaterThanOrEqual(new Date(first.deadline_at).getTime());
    });

    it("a run whose successor's id is taken fails clearly and starts nothing", async () => {
      await durable.start(counter, { n: 9, until: 9 }, { id: "t~1" });
      await durable.start(counter, { n: 0, until: 1 }, { id: "t" });
      await drain();
      const failed = await durable.status("t");
      expect(failed).toMatchObject({ status: "failed", continuedAs: null, error: { code: "run_state_conflict" } });
      expect(failed?.error?.message).toMatch(/successor's id "t~1" is taken/);
      expect(await durable.status("t~1")).toMatchObject({ output: { done: 9 }, continuedFrom: null });
    });
  });
}
