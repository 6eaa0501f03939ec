// replayTest(workflow, ledger) (docs/guide/edit-and-resume.md, "Replaying a recorded run"): a run
// recorded with status(id, { ledger: true }) replays against today's code, answering every step
// from its receipt and running no step body, and fails naming the first step that diverges.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow, InvalidInputError, type RunLedger } from "@/lib/durable";
import { createTestDurable, ReplayDivergenceError, replayTest, type TestDurable } from "@/lib/durable/testing";

/** Step bodies that ran: a replay runs none. */
let ran: string[] = [];
const input = z.object({ order: z.string() });

/** The code that wrote the recordings. */
const shipped = defineWorkflow({
  name: "ship",
  input,
  signals: { approve: z.object({ ok: z.boolean() }) },
  async run(ctx, { order }) {
    const quote = await ctx.step.run("quote", () => {
      ran.push("quote");
      return { cents: 500, at: new Date(0) };
    });
    const big = await ctx.step.run("big", () => {
      ran.push("big");
      return "x".repeat(70_000); // over the ledger read's inline limit
    });
    const tax = await ctx.step.value("tax", () => quote.cents / 10);
    await ctx.step.sleep("cool-off", "1h");
    const approval = await ctx.step.waitForSignal("approve", { timeout: "1d" });
    const charged = await ctx.step.run("charge", () => {
      ran.push("charge");
      return quote.cents + tax;
    });
    return { order, charged, approved: approval?.ok ?? false, big: big.length };
  },
});

/** The same workflow as it is today, rewritten by `change`. */
type Steps = Record<"quote" | "big" | "tax" | "coolOff" | "approve" | "charge", () => Promise<unknown>>;
const today = (change: (steps: Steps, ctx: any) => Promise<unknown>) =>
  defineWorkflow({
    name: "ship",
    input,
    signals: { approve: z.object({ ok: z.boolean() }) },
    run: (ctx) =>
      change(
        {
          quote: () => ctx.step.run("quote", () => ran.push("quote")),
          big: () => ctx.step.run("big", () => ran.push("big")),
          tax: () => ctx.step.value("tax", () => 50),
          coolOff: () => ctx.step.sleep("cool-off", "1h"),
          approve: () => ctx.step.waitForSignal("approve", { timeout: "1d" }),
          charge: () => ctx.step.run("charge", () => ran.push("charge")),
        },
        ctx,
      ),
  });

describe("replayTest", () => {
  let durable: TestDurable;
  let completed: RunLedger;
  let waiting: RunLedger;

  beforeAll(async () => {
    durable = await createTestDurable({ workflows: [shipped], skipSleeps: true });
    await durable.run(shipped, { order: "o-1" }, { id: "done" });
    await durable.signal({ runId: "done", name: "approve", payload: { ok: true } });
    await durable.drive("done");
    await durable.run(shipped, { order: "o-2" }, { id: "parked" });
    completed = (await durable.status("done", { ledger: true }))!;
    waiting = (await durable.status("parked", { ledger: true }))!;
    ran = [];
  });
  afterAll(() => durable.close());

  it("exports a ledger: the input and every receipt's result, a large one too", () => {
    expect(completed).toMatchObject({ status: "completed", input: { order: "o-1" } });
    expect(completed.steps.map((step) => [step.seq, step.id, step.kind])).toEqual([
      [0, "quote", "run"],
      [1, "big", "run"],
      [2, "tax", "value"],
      [3, "cool-off", "sleep"],
      [4, "approve", "signal"],
      [5, "charge", "run"],
    ]);
    expect(completed.steps[0]!.result).toEqual({ cents: 500, at: "1970-01-01T00:00:00.000Z" });
    expect(completed.steps[1]!.result).toHaveLength(70_000);
    expect(completed.steps[4]!.result).toMatchObject({ payload: { ok: true } }); // the receipt as stored
    expect(waiting).toMatchObject({ status: "waiting" });
    expect(waiting.steps.at(-1)).toMatchObject({ id: "approve", status: "waiting" });
  });

  it("replays a recording against the code that wrote it, through JSON, running no step body", async () => {
    const saved = JSON.parse(JSON.stringify(completed)) as RunLedger;
    await expect(replayTest(shipped, saved)).resolves.toEqual({
      status: "completed",
      output: { order: "o-1", charged: 550, approved: true, big: 70_000 },
      steps: 6,
    });
    // A run recorded while it waited replays up to its wait.
    await expect(replayTest(shipped, waiting)).resolves.toMatchObject({ steps: 5 });
    expect(ran).toEqual([]);
  });

  it("fails naming a step that changed kind, moved, is new, or is never reached", async () => {
    const cases: [ReturnType<typeof today>, string, RegExp][] = [
      [
        today(async (s, ctx) => {
          await s.quote();
          await ctx.step.value("big", () => "");
        }),
        "big",
        /step "big" is reached as a value step; the recording has a run step/,
      ],
      [
        today(async (s) => {
          await s.big();
          await s.quote();
        }),
        "big",
        /step "big" is reached before step "quote"/,
      ],
      [
        today(async (s, ctx) => {
          await s.quote();
          await ctx.step.run("fraud-check", () => ran.push("fraud-check"));
        }),
        "fraud-check",
        /a new step "fraud-check" \(run\) is reached where the recording has step "big" \(run\)/,
      ],
      [
        today(async (s, ctx) => {
          for (const step of [s.quote, s.big, s.tax, s.coolOff, s.approve, s.charge]) await step();
          await ctx.step.run("thank-you", () => ran.push("thank-you"));
        }),
        "thank-you",
        /a new step "thank-you" \(run\) is reached after the recording's last step "charge"/,
      ],
      [
        today(async (s) => {
          for (const step of [s.quote, s.big, s.tax, s.coolOff]) await step();
          return "skipped the approval";
        }),
        "approve",
        /recorded step "approve" \(signal\) is never reached: the replayed run is completed before it/,
      ],
    ];
    for (const [workflow, stepId, message] of cases) {
      const replay = replayTest(workflow, completed);
      await expect(replay).rejects.toThrow(message);
      await expect(replay).rejects.toMatchObject({ name: "ReplayDivergenceError", stepId });
      await expect(replay).rejects.toBeInstanceOf(ReplayDivergenceError);
    }
    expect(ran).toEqual([]);
  });

  it("fails when every step matched but the completed run's output differs", async () => {
    const changed = today(async (s) => {
      for (const step of [s.quote, s.big, s.tax, s.coolOff, s.approve, s.charge]) await step();
      return { changed: true };
    });
    await expect(replayTest(changed, completed)).rejects.toThrow(/every step matched, but the output differs/);
  });

  it("a recording that is still waiting lets today's code go on past where it stops", async () => {
    const extended = today(async (s, ctx) => {
      for (const step of [s.quote, s.big, s.tax, s.coolOff]) await step();
      await s.approve();
      await ctx.step.run("never-recorded", () => ran.push("never-recorded"));
    });
    await expect(replayTest(extended, waiting)).resolves.toMatchObject({ steps: 5 });
    expect(ran).toEqual([]);
  });

  it("replays AI steps from their receipts: no model is called", async () => {
    const triage = defineWorkflow({
      name: "triage",
      input: z.object({ issue: z.string() }),
      async run(ctx, { issue }) {
        const model = "test/no-such-model"; // recorded under mockAi; the replay never calls it either
        const summary = await ctx.step.ai.generateText("summarize", { model, prompt: `Summarize: ${issue}` });
        const label = z.object({ label: z.enum(["bug", "feature"]) });
        const { object } = await ctx.step.ai.generateObject("classify", { model, prompt: summary.text, schema: label });
        return { summary: summary.text, label: object.label };
      },
    });
    const recorder = await createTestDurable({ workflows: [triage] });
    recorder.mockAi("summarize", { text: "Crashes on save." });
    recorder.mockAi("classify", { object: { label: "bug" } });
    await recorder.run(triage, { issue: "it crashes" }, { id: "t-1" });
    const ledger = (await recorder.status("t-1", { ledger: true }))!;
    await recorder.close();
    expect(ledger.steps.map((step) => step.kind)).toEqual(["ai", "ai"]);
    await expect(replayTest(triage, ledger)).resolves.toEqual({
      status: "completed",
      output: { summary: "Crashes on save.", label: "bug" },
      steps: 2,
    });
  });

  it("refuses what is not a recorded run of the workflow", async () => {
    const status = (await durable.status("done"))!;
    await expect(replayTest(shipped, status as never)).rejects.toThrow(InvalidInputError);
    await expect(replayTest(shipped, status as never)).rejects.toThrow(/status\(id, \{ ledger: true \}\)/);
    const other = defineWorkflow({ name: "other", input, run: async () => null });
    await expect(replayTest(other, completed)).rejects.toThrow(/workflow "ship", not "other"/);
    await expect(replayTest(shipped, null as never)).rejects.toThrow(InvalidInputError);
    await expect(
      replayTest(shipped, { ...completed, steps: [completed.steps[0]!, completed.steps[0]!] }),
    ).rejects.toThrow(/repeats a step id/);
    await expect(durable.status("done", { ledger: "yes" as never })).rejects.toThrow(/ledger is true or false/);
  });
});
