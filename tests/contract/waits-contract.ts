// Waiting and recovery (docs/rules.md): sleeps, signals, polling waits, retries, heartbeats,
// onReclaim, cancel and retry, on every database.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { claimDueRun } from "@/lib/durable/store";
import {
  createDurable,
  defineWorkflow,
  externalKeyFor,
  InvalidInputError,
  RetryableStepError,
  RunNotFoundError,
  RunStateConflictError,
  StepLeaseLostError,
  type Durable,
} from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const hits = new Map<string, number>();
const hit = (key: string) => hits.set(key, (hits.get(key) ?? 0) + 1);
const hitsOf = (key: string) => hits.get(key) ?? 0;
const observed = new Map<string, unknown>();
const gates = new Map<string, () => void>();
const gate = (key: string) => new Promise<void>((resolve) => gates.set(key, resolve));

const sleeper = defineWorkflow({
  name: "sleeper",
  input: z.object({ first: z.string(), until: z.string().optional() }),
  async run(ctx, input) {
    await ctx.step.run("before", () => hit(`${ctx.runId}:before`));
    if (input.until) await ctx.step.sleepUntil("nap", input.until);
    else await ctx.step.sleep("nap", input.first);
    return ctx.step.run("after", () => "woke");
  },
});

const approval = defineWorkflow({
  name: "approval",
  input: z.object({ timeout: z.string().default("1h"), napFirst: z.boolean().default(false) }),
  signals: { decision: z.object({ approved: z.boolean() }) },
  async run(ctx, input) {
    if (input.napFirst) await ctx.step.sleep("nap", "10m");
    const decision = await ctx.step.waitForSignal<{ approved: boolean }>("decision", { timeout: input.timeout });
    return { decision };
  },
});

const anySignal = defineWorkflow({
  name: "any-signal",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.sleep("nap", "1h");
    return ctx.step.waitForSignal("whatever");
  },
});

const poller = defineWorkflow({
  name: "poller",
  input: z.object({
    readyAfter: z.number(),
    throwFirst: z.number().default(0),
    every: z.string(),
    timeout: z.string(),
    factor: z.number().optional(),
  }),
  async run(ctx, input) {
    return ctx.step.waitFor("job", {
      ...(input.factor === undefined ? {} : { pollBackoff: { factor: input.factor } }),
      poll: () => {
        hit(`${ctx.runId}:poll`);
        const n = hitsOf(`${ctx.runId}:poll`);
        if (n <= input.throwFirst) throw new Error(`poll ${n} failed`);
        return { n, done: n >= input.readyAfter };
      },
      ready: (s) => s.done,
      every: input.every,
      timeout: input.timeout,
    });
  },
});

const redrive = defineWorkflow({
  name: "redrive",
  input: z.object({}),
  async run(ctx) {
    const first = await ctx.step.run("charge", (s) => {
      hit(`${ctx.runId}:charge`);
      return s.externalKey;
    });
    const second = await ctx.step.run("ship", (s) => {
      hit(`${ctx.runId}:ship`);
      observed.set(`${ctx.runId}:ship:attempt`, s.attempt);
      if (hitsOf(`${ctx.runId}:ship`) === 1) throw new Error("carrier down");
      return s.externalKey;
    });
    return { first, second };
  },
});

const held = defineWorkflow({
  name: "held",
  input: z.object({ onReclaim: z.enum(["rerun", "fail"]).default("rerun") }),
  async run(ctx, input) {
    ctx.abortSignal.addEventListener("abort", () => observed.set(`${ctx.runId}:abort`, ctx.abortSignal.reason));
    return ctx.step.run(
      "slow",
      async (s) => {
        hit(`${ctx.runId}:slow`);
        if (hitsOf(`${ctx.runId}:slow`) === 1) await gate(ctx.runId);
        if (observed.get(`${ctx.runId}:beat`)) {
          try {
            await s.heartbeat();
          } catch (error) {
            observed.set(`${ctx.runId}:heartbeat`, error);
          }
        }
        return s.attempt;
      },
      { onReclaim: input.onReclaim },
    );
  },
});

const parallel = defineWorkflow({
  name: "parallel",
  input: z.object({}),
  async run(ctx) {
    const [charged] = await Promise.all([
      ctx.step.run("charge", async () => {
        hit(`${ctx.runId}:charge`);
        await new Promise((r) => setTimeout(r, 30));
        return "charged";
      }),
      ctx.step.sleep("cool-off", "1h"),
    ]);
    return charged;
  },
});

const swallower = defineWorkflow({
  name: "swallower",
  input: z.object({}),
  async run(ctx) {
    await Promise.race([ctx.step.sleep("nap", "1h"), Promise.resolve("impatient")]);
    return "returned early";
  },
});

const timeouts = defineWorkflow({
  name: "timeouts",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run(
      "hang",
      (s) => new Promise((_, reject) => s.abortSignal.addEventListener("abort", () => reject(s.abortSignal.reason))),
      { timeout: "50ms" },
    );
  },
});

const retryAfter = defineWorkflow({
  name: "retry-after",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run(
      "limited",
      (s) => {
        if (s.attempt === 1) throw new RetryableStepError("429", { retryAfter: "2h" });
        return s.attempt;
      },
      { retries: 1, retryDelay: "1s" },
    );
  },
});

const workflows = [sleeper, approval, anySignal, poller, redrive, held, parallel, swallower, timeouts, retryAfter];

export function runWaitsContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`waiting and recovery on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    const logs: string[] = [];
    const tick = () => durable.tick({ budgetMs: 10_000 });
    const stepRow = async (runId: string, stepId: string) =>
      (await sql<any>`select * from durable_steps where run_id = ${runId} and step_id = ${stepId}`.execute(db)).rows[0];
    const count = async (table: string) =>
      (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db)).rows[0]!.n;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows,
        secrets: { durable: "t" },
        defaults: { lease: "2s", inProcessWait: "1s" },
        log: (m) => logs.push(m),
      });
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      hits.clear();
      observed.clear();
      logs.length = 0;
    });

    it("sleeps: waiting for the stored wake time, which replays never move and signals never advance", async () => {
      await durable.start(sleeper, { first: "10m" }, { id: "s1" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      const parked = (await durable.status("s1"))!;
      expect(parked).toMatchObject({ status: "waiting", waitingFor: { kind: "sleep", name: "nap" } });
      const wake = (await stepRow("s1", "nap")).wake_at as Date;
      expect(new Date(parked.wakeAt!).getTime()).toBe(wake.getTime());
      // A signal to a sleeping run is kept, but does not wake it.
      expect(await durable.signal({ runId: "s1", name: "poke" })).toEqual({
        ok: true,
        signalled: true,
        alreadyDelivered: false,
      });
      expect((await durable.status("s1"))!.wakeAt).toBe(parked.wakeAt);
      expect((await tick()).claimed).toBe(0);
      // Forced early replay: the sleep parks again on the same stored time.
      await sql`update durable_runs set wake_at = durable_now() where id = 's1'`.execute(db);
      expect(await tick()).toMatchObject({ claimed: 1, waiting: 1 });
      expect(((await stepRow("s1", "nap")).wake_at as Date).getTime()).toBe(wake.getTime());
      expect((await durable.status("s1"))!.wakeAt).toBe(parked.wakeAt);
      await durable.testing.advanceClock("10m");
      expect(await tick()).toMatchObject({ completed: 1 });
      const done = (await durable.status("s1"))!;
      expect(done.output).toBe("woke");
      expect(done.steps.find((s) => s.id === "nap")).toMatchObject({ kind: "sleep", status: "completed" });
      expect(hitsOf("s1:before")).toBe(1);
    });

    it("sleepUntil a date, and short sleeps in process without parking", async () => {
      await durable.start(
        sleeper,
        { first: "0ms", until: new Date(Date.now() + 3_600_000).toISOString() },
        { id: "su" },
      );
      expect(await tick()).toMatchObject({ waiting: 1 });
      await durable.testing.advanceClock("61m");
      expect(await tick()).toMatchObject({ completed: 1 });

      await durable.start(sleeper, { first: "50ms" }, { id: "short" });
      expect(await tick()).toMatchObject({ claimed: 1, completed: 1, waiting: 0 });
      expect((await durable.status("short"))!.attempts).toBe(1);
    });

    it("waits for a signal: delivered once, makes the run due at once, validated by the declared schema", async () => {
      await durable.start(approval, {}, { id: "a1" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect(await durable.status("a1")).toMatchObject({
        status: "waiting",
        waitingFor: { kind: "signal", name: "decision" },
      });
      await expect(durable.signal({ runId: "a1", name: "other", payload: {} })).rejects.toSatisfy(InvalidInputError.is);
      await expect(durable.signal({ runId: "a1", name: "decision", payload: { approved: "yes" } })).rejects.toSatisfy(
        InvalidInputError.is,
      );
      await expect(durable.signal({ runId: "nope", name: "decision", payload: { approved: true } })).rejects.toSatisfy(
        RunNotFoundError.is,
      );
      expect(await count("durable_signals")).toBe(0);
      expect(await durable.signal({ runId: "a1", name: "decision", payload: { approved: true }, id: "evt-1" })).toEqual(
        { ok: true, signalled: true, alreadyDelivered: false },
      );
      // The same delivery id is a repeat; without an id every call is a delivery, queued behind
      // the first: the run's one wait takes the oldest.
      expect(
        await durable.signal({ runId: "a1", name: "decision", payload: { approved: false }, id: "evt-1" }),
      ).toEqual({ ok: true, signalled: false, alreadyDelivered: true });
      expect(await durable.signal({ runId: "a1", name: "decision", payload: { approved: false } })).toEqual({
        ok: true,
        signalled: true,
        alreadyDelivered: false,
      });
      expect(await count("durable_signals")).toBe(2);
      expect(await tick()).toMatchObject({ completed: 1 });
      expect((await durable.status("a1"))!.output).toEqual({ decision: { approved: true } });
      // The same delivery id after the end is still a repeat, not a conflict; a new one is refused.
      expect(
        await durable.signal({ runId: "a1", name: "decision", payload: { approved: true }, id: "evt-1" }),
      ).toMatchObject({ alreadyDelivered: true });
      await expect(
        durable.signal({ runId: "a1", name: "decision", payload: { approved: true }, id: "evt-2" }),
      ).rejects.toSatisfy(RunStateConflictError.is);
    });

    it("keeps a signal that lands before the wait and answers it there", async () => {
      await durable.start(approval, { napFirst: true }, { id: "early" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect(await durable.signal({ runId: "early", name: "decision", payload: { approved: false } })).toMatchObject({
        signalled: true,
      });
      expect((await tick()).claimed).toBe(0); // still asleep: the signal did not wake it
      await durable.testing.advanceClock("10m");
      expect(await tick()).toMatchObject({ completed: 1 });
      expect((await durable.status("early"))!.output).toEqual({ decision: { approved: false } });
    });

    it("times out at the stored deadline (null) even with a later delivery; one that landed first wins", async () => {
      await durable.start(approval, { timeout: "1h" }, { id: "late" });
      await durable.start(approval, { timeout: "1h" }, { id: "first" });
      expect(await tick()).toMatchObject({ waiting: 2 });
      await durable.signal({ runId: "first", name: "decision", payload: { approved: true } });
      await durable.testing.advanceClock("61m");
      // A delivery after the deadline is kept in the mailbox (a later wait could take it), but
      // the timed-out wait is not answered by it.
      expect(await durable.signal({ runId: "late", name: "decision", payload: { approved: true } })).toMatchObject({
        signalled: true,
      });
      expect(await tick()).toMatchObject({ completed: 2 });
      expect((await durable.status("late"))!.output).toEqual({ decision: null });
      expect((await durable.status("first"))!.output).toEqual({ decision: { approved: true } });
    });

    it("accepts any signal name for a workflow that declares none", async () => {
      await durable.start(anySignal, {}, { id: "any" });
      expect(await durable.signal({ runId: "any", name: "whatever", payload: [1, 2] })).toMatchObject({
        signalled: true,
      });
      expect(await tick()).toMatchObject({ waiting: 1 });
      await durable.testing.advanceClock("1h");
      expect(await tick()).toMatchObject({ completed: 1 });
      expect((await durable.status("any"))!.output).toEqual([1, 2]);
    });

    it("polls until ready in process: one receipt, polls counted, throwing polls backed off", async () => {
      await durable.start(poller, { readyAfter: 4, throwFirst: 2, every: "10ms", timeout: "1h" }, { id: "p1" });
      expect(await tick()).toMatchObject({ completed: 1 });
      const status = (await durable.status("p1"))!;
      expect(status.output).toEqual({ n: 4, done: true });
      expect(status.steps).toHaveLength(1);
      expect((await stepRow("p1", "job")).polls).toBe(4);
    });

    it("parks between long polls and fails with step_timeout at the deadline", async () => {
      await durable.start(poller, { readyAfter: 99, every: "20m", timeout: "1h" }, { id: "p2" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect(await durable.status("p2")).toMatchObject({
        status: "waiting",
        waitingFor: { kind: "poll", name: "job" },
      });
      const deadline = (await stepRow("p2", "job")).deadline_at as Date;
      for (let i = 0; i < 4; i++) {
        await durable.testing.advanceClock("20m");
        await tick();
      }
      expect(((await stepRow("p2", "job")).deadline_at as Date).getTime()).toBe(deadline.getTime());
      expect(await durable.status("p2")).toMatchObject({ status: "failed", error: { code: "step_timeout" } });
      expect((await durable.status("p2"))!.error!.message).toMatch(/not ready after 3 polls/);
      // Retrying the run starts the wait over, with a new deadline.
      await durable.retry("p2");
      expect(await tick()).toMatchObject({ waiting: 1 });
      const restarted = await stepRow("p2", "job");
      expect(restarted).toMatchObject({ status: "waiting", polls: 1 });
      expect((restarted.deadline_at as Date).getTime()).toBeGreaterThan(deadline.getTime());
    });

    it("parks between polls whose backoff is a fraction of a millisecond", async () => {
      // 6001 ms × 1.5 = 9001.5 ms: the wait is stored to the millisecond rather than refused.
      await durable.start(poller, { readyAfter: 3, every: "6001ms", timeout: "1h", factor: 1.5 }, { id: "p3" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      await durable.testing.advanceClock("6001ms");
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect(await durable.status("p3")).toMatchObject({ status: "waiting", waitingFor: { kind: "poll" } });
      await durable.testing.advanceClock("10s");
      expect(await tick()).toMatchObject({ completed: 1 });
      expect((await durable.status("p3"))!.output).toEqual({ n: 3, done: true });
    });

    it("honours RetryableStepError's retryAfter and shows the retry wait", async () => {
      await durable.start(retryAfter, {}, { id: "ra" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      const waiting = (await durable.status("ra"))!;
      expect(waiting.waitingFor).toEqual({ kind: "retry", name: "limited" });
      await durable.testing.advanceClock("1h");
      expect((await tick()).claimed).toBe(0);
      await durable.testing.advanceClock("1h");
      expect(await tick()).toMatchObject({ completed: 1 });
      expect((await durable.status("ra"))!.output).toBe(2);
    });

    it("fails an attempt past its timeout with StepTimeoutError", async () => {
      await durable.start(timeouts, {}, { id: "to" });
      expect(await tick()).toMatchObject({ failed: 1 });
      expect((await durable.status("to"))!.error).toMatchObject({ code: "step_timeout" });
    });

    it("retries a failed run keeping completed receipts and external keys, counting attempts on", async () => {
      await durable.start(redrive, {}, { id: "rd" });
      expect(await tick()).toMatchObject({ failed: 1 });
      await expect(durable.retry("nope")).rejects.toSatisfy(RunNotFoundError.is);
      const retried = await durable.retry("rd");
      expect(retried.status).toBe("pending");
      await expect(durable.retry("rd")).rejects.toSatisfy(RunStateConflictError.is);
      expect(await tick()).toMatchObject({ completed: 1 });
      const done = (await durable.status("rd"))!;
      expect(done.output).toEqual({ first: externalKeyFor("rd", "charge"), second: externalKeyFor("rd", "ship") });
      expect(hitsOf("rd:charge")).toBe(1);
      expect(observed.get("rd:ship:attempt")).toBe(2);
      expect(done.attempts).toBe(2);
    });

    it("cancels: terminal, fenced; the owner's next write is refused and its abortSignal says cancelled", async () => {
      await durable.start(held, {}, { id: "c1" });
      observed.set("c1:beat", true);
      const owner = tick();
      await until(() => hitsOf("c1:slow") === 1);
      const cancelled = await durable.cancel("c1", "customer asked");
      expect(cancelled).toMatchObject({
        status: "cancelled",
        error: { code: "cancelled", message: "customer asked" },
        waitingFor: null,
        wakeAt: null,
      });
      await expect(durable.cancel("c1")).rejects.toSatisfy(RunStateConflictError.is);
      await expect(durable.cancel("missing")).rejects.toSatisfy(RunNotFoundError.is);
      gates.get("c1")!();
      expect(await owner).toMatchObject({ completed: 0 });
      expect(StepLeaseLostError.is(observed.get("c1:heartbeat"))).toBe(true);
      expect(observed.get("c1:abort")).toBe("cancelled");
      expect((await durable.status("c1"))!.status).toBe("cancelled");
      expect((await durable.status("c1"))!.steps).toEqual([]);
      await durable.testing.advanceClock("1h");
      expect((await tick()).claimed).toBe(0);
      await expect(durable.signal({ runId: "c1", name: "x" })).rejects.toSatisfy(RunStateConflictError.is);
    });

    it('onReclaim: "fail" refuses to re-run a body a lost owner may have started', async () => {
      await durable.start(held, { onReclaim: "fail" }, { id: "nr" });
      const dead = await claimDueRun(db, { workflows: ["held"], leaseMs: 1_000 });
      expect(dead).not.toBeNull();
      await durable.testing.advanceClock("2s");
      expect(await tick()).toMatchObject({ healed: 1, failed: 1 });
      const status = (await durable.status("nr"))!;
      expect(status.error!.code).toBe("step_not_replay_safe");
      expect(status.error!.message).toContain(externalKeyFor("nr", "slow"));
      expect(status.error!.message).toMatch(/expired at \d{4}-/);
      expect(hitsOf("nr:slow")).toBe(0);
    });

    it("a suspension waits for in-flight parallel steps to record first", async () => {
      await durable.start(parallel, {}, { id: "par" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect((await durable.status("par"))!.steps.find((s) => s.id === "charge")).toMatchObject({
        status: "completed",
      });
      await durable.testing.advanceClock("1h");
      expect(await tick()).toMatchObject({ completed: 1 });
      expect(hitsOf("par:charge")).toBe(1);
    });

    it("a body that swallows its suspension stays suspended, with a warning", async () => {
      await durable.start(swallower, {}, { id: "sw" });
      expect(await tick()).toMatchObject({ waiting: 1, completed: 0 });
      expect((await durable.status("sw"))!.status).toBe("waiting");
      expect(logs.filter((l) => /settled while suspended/.test(l))).toHaveLength(1);
    });
  });
}
