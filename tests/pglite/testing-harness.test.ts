// lib/durable/testing.ts: what a user's vitest file gets. Real PGlite in memory, the real engine.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, createDurable, defineWorkflow, FatalStepError, InvalidInputError } from "@/lib/durable";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

const sent: string[] = [];
const onboarding = defineWorkflow({
  name: "onboarding",
  input: z.object({ email: z.string() }),
  signals: { confirmed: z.object({ at: z.string() }) },
  async run(ctx, input) {
    await ctx.step.run("welcome", () => sent.push(`welcome ${input.email}`));
    const confirmed = await ctx.step.waitForSignal<{ at: string }>("confirmed", { timeout: "3d" });
    if (!confirmed) return { status: "expired" };
    await ctx.step.sleep("cool-off", "1h");
    await ctx.step.run("tips", () => sent.push(`tips ${input.email}`));
    return { status: "onboarded", at: confirmed.at };
  },
});

// What the bodies below did: a mocked step leaves no trace here.
const calls: string[] = [];

const payment = defineWorkflow({
  name: "payment",
  input: z.object({ amount: z.number() }),
  async run(ctx, input) {
    try {
      const charge = await ctx.step.run(
        "charge",
        () => {
          calls.push(`charge ${ctx.runId}`);
          return { id: `ch_real_${input.amount}` };
        },
        { retries: 2, retryDelay: "10ms", timeout: "20s" },
      );
      return { ok: true, charge };
    } catch (error) {
      return { ok: false, name: (error as Error).name, message: (error as Error).message };
    }
  },
});

const booking = defineWorkflow({
  name: "booking",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.tx("book", async () => {
      calls.push(`book ${ctx.runId}`);
      return { booked: "for real" };
    });
  },
});

const label = z.object({ label: z.enum(["bug", "feature"]) });
const triage = defineWorkflow({
  name: "triage",
  input: z.object({ issue: z.string() }),
  async run(ctx, input) {
    // No model is ever called here: every AI step of these tests is mocked.
    const model = "test/no-such-model";
    const summary = await ctx.step.ai.generateText("summarize", { model, prompt: `Summarize: ${input.issue}` });
    const { object } = await ctx.step.ai.generateObject("classify", { model, prompt: summary.text, schema: label });
    return { summary, label: object.label };
  },
});

const reminder = defineWorkflow({
  name: "reminder",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("first", () => calls.push(`first ${ctx.runId}`));
    await ctx.step.sleep("wait-a-day", "1d");
    await ctx.step.sleepUntil("new-year", "2100-01-01T00:00:00.000Z");
    const go = await ctx.step.waitForSignal("go", { timeout: "1h" });
    return { go: go !== null };
  },
});

// A parent that invokes a child that invokes a grandchild; a parent that starts a child and races
// its end against a sleep.
const grandchild = defineWorkflow({
  name: "grandchild",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step.run("square", () => {
      calls.push(`square ${ctx.runId}`);
      return input.n * input.n;
    });
  },
});
const middle = defineWorkflow({
  name: "middle",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const square = await ctx.step.invoke("square", grandchild, { n: input.n });
    return { square, plusOne: square + 1 };
  },
});
const family = defineWorkflow({
  name: "family",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const [a, b] = await Promise.all([
      ctx.step.invoke("a", middle, { n: input.n }),
      ctx.step.invoke("b", middle, { n: input.n + 1 }),
    ]);
    return { total: a.plusOne + b.plusOne };
  },
});
const watcher = defineWorkflow({
  name: "watcher",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const started = await ctx.step.start("kick", middle, { n: input.n });
    const first = await ctx.step.waitForAny("first", { done: { run: started.id }, late: { sleep: "1d" } });
    return first;
  },
});

const workflows = [onboarding, payment, booking, triage, reminder, grandchild, middle, family, watcher];

/** The stored receipt of a step: what a replay would answer. */
async function receipt(durable: TestDurable, runId: string, stepId: string) {
  const { rows } = await sql<{ kind: string; status: string; attempt: number; result: unknown; error: any }>`
    select kind, status, attempt, result, error from durable_steps
    where run_id = ${runId} and step_id = ${stepId}`.execute(durable.db);
  return rows[0];
}

describe("createTestDurable", () => {
  let durable: TestDurable;
  beforeAll(async () => {
    durable = await createTestDurable({ workflows });
  });
  afterAll(() => durable.close());

  it("drives a run to its first wait, on through a signal and a sleep once the clock moves", async () => {
    const waiting = await durable.run(onboarding, { email: "a@example.com" }, { id: "ob-1" });
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "confirmed" } });
    expect(sent).toEqual(["welcome a@example.com"]);

    await durable.signal({ runId: "ob-1", name: "confirmed", payload: { at: "2026-01-01" } });
    expect(await durable.drive("ob-1")).toMatchObject({ status: "waiting", waitingFor: { kind: "sleep" } });

    await durable.advanceClock("1h");
    const done = await durable.drive("ob-1");
    expect(done).toMatchObject({ status: "completed", output: { status: "onboarded", at: "2026-01-01" } });
    expect(sent).toEqual(["welcome a@example.com", "tips a@example.com"]);
  });

  it("lets a wait time out when the clock passes its deadline", async () => {
    await durable.run(onboarding, { email: "b@example.com" }, { id: "ob-2" });
    await durable.advanceClock("3d");
    expect(await durable.drive("ob-2")).toMatchObject({ status: "completed", output: { status: "expired" } });
  });

  it("cancels a waiting run, which no drive takes on again", async () => {
    await durable.run(onboarding, { email: "c@example.com" }, { id: "ob-3" });
    expect(await durable.cancel("ob-3", "changed their mind")).toMatchObject({ status: "cancelled" });
    await durable.signal({ runId: "ob-3", name: "confirmed", payload: { at: "x" } }).catch(() => {});
    expect(await durable.drive("ob-3")).toMatchObject({ status: "cancelled" });
  });

  it("drives the children and grandchildren a parent invokes, and returns the parent completed", async () => {
    calls.length = 0;
    const done = await durable.run(family, { n: 2 }, { id: "fam-1" });
    expect(done).toMatchObject({ status: "completed", output: { total: 4 + 1 + 9 + 1 } });
    expect(calls.sort()).toEqual(["square fam-1/a/square", "square fam-1/b/square"]);
    for (const id of ["fam-1/a", "fam-1/b", "fam-1/a/square", "fam-1/b/square"]) {
      expect((await durable.status(id))?.status, id).toBe("completed");
    }
  });

  it("drives a child started with ctx.step.start that the parent races with waitForAny", async () => {
    const done = await durable.run(watcher, { n: 3 }, { id: "watch-1" });
    expect(done).toMatchObject({
      status: "completed",
      output: { branch: "done", value: { status: "completed", output: { square: 9, plusOne: 10 }, error: null } },
    });
  });

  it("waits on a sleep without skipSleeps", async () => {
    const waiting = await durable.run(reminder, {}, { id: "rem-0" });
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "sleep", name: "wait-a-day" } });
    expect((await receipt(durable, "rem-0", "wait-a-day"))?.status).toBe("waiting");
  });

  describe("mockStep", () => {
    beforeAll(() => durable.clearMocks());
    afterAll(() => durable.clearMocks());

    it("records { result } as the step's result, through the JSON round trip, without the body", async () => {
      durable.mockStep("charge", { result: { id: "ch_mock", at: new Date("2026-02-03T04:05:06.000Z") } });
      const done = await durable.run(payment, { amount: 1 }, { id: "pay-result" });
      const charge = { id: "ch_mock", at: "2026-02-03T04:05:06.000Z" };
      expect(done).toMatchObject({ status: "completed", output: { ok: true, charge } });
      expect(calls).not.toContain("charge pay-result");
      expect(await receipt(durable, "pay-result", "charge")).toMatchObject({
        kind: "run",
        status: "completed",
        attempt: 1,
        result: charge,
      });
    });

    it("fails each attempt with { error }: retries are spent and counted, then the body sees it", async () => {
      durable.mockStep("charge", { error: "card network down" });
      const done = await durable.run(payment, { amount: 2 }, { id: "pay-error" });
      expect(done).toMatchObject({
        status: "completed",
        output: { ok: false, name: "Error", message: "card network down" },
      });
      expect(done.steps.find((s) => s.id === "charge")).toMatchObject({ status: "failed", attempt: 3 });
      expect(calls).not.toContain("charge pay-error");
    });

    it("fails at once with a FatalStepError, whatever the retries", async () => {
      durable.mockStep("charge", { error: new FatalStepError("card declined") });
      const done = await durable.run(payment, { amount: 3 }, { id: "pay-fatal" });
      expect(done).toMatchObject({ output: { ok: false, name: "FatalStepError", message: "card declined" } });
      expect(done.steps.find((s) => s.id === "charge")).toMatchObject({ status: "failed", attempt: 1 });
    });

    it("times each attempt out with { timeout: true }: a StepTimeoutError is stored", async () => {
      durable.mockStep("charge", { timeout: true });
      const done = await durable.run(payment, { amount: 4 }, { id: "pay-timeout" });
      expect(done).toMatchObject({ output: { ok: false, name: "StepTimeoutError" } });
      expect(done.steps.find((s) => s.id === "charge")).toMatchObject({
        status: "failed",
        attempt: 3,
        error: { code: "step_timeout", message: 'step "charge" timed out after 20000 ms (mocked)' },
      });
      expect((await receipt(durable, "pay-timeout", "charge"))?.error).toMatchObject({ name: "StepTimeoutError" });
    });

    it("scopes a mock to one run, and the run-scoped mock wins over one for every run", async () => {
      durable.clearMocks();
      durable.mockStep("charge", { result: { id: "ch_scoped" } }, { runId: "pay-scoped" });
      expect(await durable.run(payment, { amount: 5 }, { id: "pay-scoped" })).toMatchObject({
        output: { charge: { id: "ch_scoped" } },
      });
      expect(await durable.run(payment, { amount: 6 }, { id: "pay-unscoped" })).toMatchObject({
        output: { charge: { id: "ch_real_6" } },
      });
      expect(calls).toContain("charge pay-unscoped");
      expect(calls).not.toContain("charge pay-scoped");

      durable.mockStep("charge", { result: { id: "ch_everyone" } });
      durable.mockStep("charge", { result: { id: "ch_only-this-run" } }, { runId: "pay-both" });
      expect(await durable.run(payment, { amount: 7 }, { id: "pay-both" })).toMatchObject({
        output: { charge: { id: "ch_only-this-run" } },
      });
    });

    it("clearMocks lets the bodies run again", async () => {
      durable.mockStep("charge", { error: "down" });
      durable.clearMocks();
      expect(await durable.run(payment, { amount: 8 }, { id: "pay-cleared" })).toMatchObject({
        output: { ok: true, charge: { id: "ch_real_8" } },
      });
      expect(calls).toContain("charge pay-cleared");
    });

    it("answers a step that has a receipt from it: a mock set later changes nothing on replay", async () => {
      const waiting = await durable.run(onboarding, { email: "d@example.com" }, { id: "ob-replay" });
      expect(waiting.status).toBe("waiting");
      durable.mockStep("welcome", { error: "would fail" });
      await durable.signal({ runId: "ob-replay", name: "confirmed", payload: { at: "2026-03-01" } });
      expect(await durable.drive("ob-replay")).toMatchObject({ status: "waiting", waitingFor: { kind: "sleep" } });
      await durable.advanceClock("1h");
      expect(await durable.drive("ob-replay")).toMatchObject({ status: "completed", output: { status: "onboarded" } });
      durable.clearMocks();
    });

    it("mocks a tx step: no body, no transaction of its own, a completed tx receipt", async () => {
      durable.mockStep("book", { result: { booked: "mocked" } });
      const done = await durable.run(booking, {}, { id: "book-mocked" });
      expect(done).toMatchObject({ status: "completed", output: { booked: "mocked" } });
      expect(calls).not.toContain("book book-mocked");
      expect(await receipt(durable, "book-mocked", "book")).toMatchObject({ kind: "tx", status: "completed" });
    });

    it("mockAi answers AI steps with a partial result filled into the stored shape", async () => {
      durable.mockAi("summarize", { text: "Crashes on save." });
      durable.mockAi("classify", { object: { label: "bug" }, usage: { outputTokens: 7 } });
      const done = await durable.run(triage, { issue: "it crashes" }, { id: "ai-mocked" });
      const summary = { text: "Crashes on save.", finishReason: "stop", usage: {}, response: {} };
      expect(done).toMatchObject({ status: "completed", output: { summary, label: "bug" } });
      expect(await receipt(durable, "ai-mocked", "summarize")).toMatchObject({ kind: "ai", result: summary });
      expect((await receipt(durable, "ai-mocked", "classify"))?.result).toEqual({
        object: { label: "bug" },
        finishReason: "stop",
        usage: { outputTokens: 7 },
        response: {},
      });
    });

    it("still checks a mocked object against generateObject's schema", async () => {
      durable.mockAi("summarize", { text: "Wants dark mode." });
      durable.mockAi("classify", { object: { label: "question" } });
      const done = await durable.run(triage, { issue: "dark mode?" }, { id: "ai-bad-object" });
      expect(done).toMatchObject({ status: "failed", error: { code: "invalid_input" } });
    });

    it("refuses a mock that is not exactly one of result, error or timeout", () => {
      expect(() => durable.mockStep("charge", {} as never)).toThrow(InvalidInputError);
      expect(() => durable.mockStep("charge", { result: 1, error: "x" } as never)).toThrow(InvalidInputError);
      expect(() => durable.mockStep("charge", { timeout: false } as never)).toThrow(InvalidInputError);
    });
  });
});

describe("createTestDurable({ skipSleeps: true })", () => {
  let durable: TestDurable;
  beforeAll(async () => {
    durable = await createTestDurable({ workflows, skipSleeps: true });
  });
  afterAll(() => durable.close());

  it("completes sleeps at once, recorded as completed sleeps that a replay answers", async () => {
    const waiting = await durable.run(reminder, {}, { id: "rem-1" });
    // Both sleeps are done in the first run; the signal wait is not skipped.
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "go" } });
    for (const id of ["wait-a-day", "new-year"]) {
      expect(waiting.steps.find((step) => step.id === id)).toMatchObject({ kind: "sleep", status: "completed" });
    }
    await durable.signal({ runId: "rem-1", name: "go", payload: { now: true } });
    expect(await durable.drive("rem-1")).toMatchObject({ status: "completed", output: { go: true } });
    // The replay answered "first" and both sleeps from their receipts.
    expect(calls.filter((call) => call === "first rem-1")).toHaveLength(1);
  });

  it("leaves a signal's timeout to advanceClock", async () => {
    await durable.run(reminder, {}, { id: "rem-2" });
    expect(await durable.drive("rem-2")).toMatchObject({ status: "waiting", waitingFor: { kind: "signal" } });
    await durable.advanceClock("1h");
    expect(await durable.drive("rem-2")).toMatchObject({ status: "completed", output: { go: false } });
  });
});

describe("createDurable's testing-only options", () => {
  it("refuses skipSleeps, mockStep and observeStep without testing: true", () => {
    // createDurable touches no database until it is used.
    const db = {} as AnyKysely;
    expect(() => createDurable({ db, workflows: [], skipSleeps: true })).toThrow(InvalidInputError);
    expect(() => createDurable({ db, workflows: [], testing: false, skipSleeps: true })).toThrow(/testing: true/);
    expect(() => createDurable({ db, workflows: [], mockStep: () => undefined })).toThrow(InvalidInputError);
    expect(() => createDurable({ db, workflows: [], observeStep: () => undefined })).toThrow(/observeStep/);
    expect(() => createDurable({ db, workflows: [], skipSleeps: false })).not.toThrow();
    expect(() => createDurable({ db, workflows: [], testing: true, skipSleeps: true })).not.toThrow();
    expect(() => createDurable({ db, workflows: [], testing: true, mockStep: () => undefined })).not.toThrow();
    expect(() => createDurable({ db, workflows: [], testing: true, observeStep: () => undefined })).not.toThrow();
  });
});
