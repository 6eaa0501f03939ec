// What the dashboard says came of a completed demo run (app/components/outcome.ts), from the
// demos' real outputs on the test harness: a checkout that timed out and refunded completed, and
// its outcome says so ("Cancelled and refunded", a "bad" tone), beside the green Completed badge.
// The runs table reads the same outcome with one statement per page (app/runs/outcomes.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcomeOf } from "@/app/components/outcome";
import { attachProviderDb } from "@/app/mock-providers/db";
import { readOutcomes } from "@/app/runs/outcomes";
import { outcomeLabels } from "@/app/workflows/catalog";
import { checkout } from "@/app/workflows/checkout";
import { research } from "@/app/workflows/research";
import { ensureAppSchema } from "@/db/app-schema";
import { FatalStepError } from "@/lib/durable";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

let durable: TestDurable;
beforeAll(async () => {
  durable = await createTestDurable({
    workflows: [checkout, research],
    async setup(db) {
      await ensureAppSchema(db);
      attachProviderDb(db);
    },
  });
});
afterAll(() => durable.close());

const charged = (runId: string) =>
  durable.mockStep(
    "charge-card",
    {
      result: { id: `ch_${runId}`, kind: "charge", reference: "ord", amountCents: 1200, currency: "EUR", status: "ok" },
    },
    { runId },
  );

describe("the outcome of a completed demo run", () => {
  it("a checkout that timed out and refunded: completed, and its outcome says cancelled and refunded", async () => {
    charged("co-late");
    durable.mockStep("refund-charge", { result: { id: "re_1", status: "succeeded" } }, { runId: "co-late" });
    await durable.run(checkout, { sku: "mug" }, { id: "co-late" });
    await durable.advanceClock("15m");
    const done = await durable.drive("co-late");
    expect(done.status).toBe("completed");
    expect(outcomeOf(done.output, outcomeLabels("checkout"))).toEqual({
      label: "Cancelled and refunded",
      tone: "bad",
      detail: "the payment did not settle within 15 minutes; refunded",
    });
  });

  it("a declined card and a settled one, in the checkout's words", async () => {
    durable.mockStep("charge-card", { error: new FatalStepError("card declined") }, { runId: "co-declined" });
    const declined = await durable.run(checkout, { sku: "poster" }, { id: "co-declined" });
    expect(outcomeOf(declined.output, outcomeLabels("checkout"))).toEqual({
      label: "Payment failed",
      tone: "bad",
      detail: "card declined",
    });
    expect(outcomeOf({ orderId: "o", status: "confirmed" }, outcomeLabels("checkout"))).toMatchObject({
      label: "Order confirmed",
      tone: "good",
    });
  });

  it("a research run whose outline was rejected", async () => {
    durable.mockAi("plan", { object: { subQuestions: ["Who?", "Why?"] } });
    durable.mockAi("answer/0", { text: "Someone." });
    durable.mockAi("answer/1", { text: "Because." });
    await durable.run(research, {}, { id: "r-rejected" });
    await durable.signal({ runId: "r-rejected", name: "outline", payload: { approved: false } });
    const done = await durable.drive("r-rejected");
    durable.clearMocks();
    expect(done.status).toBe("completed");
    expect(outcomeOf(done.output, outcomeLabels("research"))).toMatchObject({ label: "Outline rejected", tone: "bad" });
  });

  it("the runs table reads the same outcomes for a page of runs, and none for runs not completed", async () => {
    const runs = [
      { id: "co-late", workflow: "checkout", status: "completed" },
      { id: "co-declined", workflow: "checkout", status: "completed" },
      { id: "r-rejected", workflow: "research", status: "completed" },
      { id: "nobody", workflow: "checkout", status: "completed" },
      { id: "co-late-too", workflow: "checkout", status: "waiting" },
    ];
    const outcomes = await readOutcomes(durable, runs);
    expect(Object.keys(outcomes).sort()).toEqual(["co-declined", "co-late", "r-rejected"]);
    expect(outcomes["co-late"]).toEqual({
      label: "Cancelled and refunded",
      tone: "bad",
      detail: "the payment did not settle within 15 minutes; refunded",
    });
    expect(outcomes["r-rejected"]).toMatchObject({ label: "Outline rejected" });
    expect(await readOutcomes(durable, [])).toEqual({});
  });
});
