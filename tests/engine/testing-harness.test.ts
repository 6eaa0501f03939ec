// lib/durable/testing.ts: what a user's vitest file gets. Real PGlite in memory, the real engine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
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

describe("createTestDurable", () => {
  let durable: TestDurable;
  beforeAll(async () => {
    durable = await createTestDurable({ workflows: [onboarding] });
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
});
