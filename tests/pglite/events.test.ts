// durable.events(runId): a run's annotations, oldest first, as the run page's timeline shows them.
// One run is taken through two heals (one by a status read, one by a claim), a budget yield, a
// failure, a retry and a cancel; each event is checked with its fields, then the paging and the
// options the call refuses. On in-memory PGlite, with the database clock moved by the test.
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, FatalStepError, InvalidInputError, type Durable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { claimDueRun } from "@/lib/durable/store";
import { describeEvent } from "@/app/components/run-timeline";

let failFlaky = true;

const eventful = defineWorkflow({
  name: "eventful",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("quick", () => 1, { lease: "1s" });
    // 20 s + the 1 s margin does not fit a 10 s budget: the run is given back before it.
    await ctx.step.run("slow", () => 2, { lease: "20s" });
    await ctx.step.run("flaky", () => {
      if (failFlaky) throw new FatalStepError("provider down");
      return 3;
    });
    await ctx.step.waitForSignal("go");
    return "done";
  },
});

describe("durable.events on PGlite", () => {
  let db: Kysely<any>;
  let durable: Durable;

  beforeAll(async () => {
    db = await connect("memory://");
    durable = createDurable({ db, workflows: [eventful] });
    await durable.migrate();
  });

  afterAll(async () => {
    await durable?.close();
    await db?.destroy();
  });

  it("returns heals, a yield, a retry and a cancel in order, with their fields", async () => {
    await durable.start(eventful, {}, { id: "ev" });
    await durable.start(eventful, {}, { id: "other" });

    // A dead owner: claimed with a 2 s lease, then nothing. A status read after the lease heals the run.
    const first = (await claimDueRun(db, { workflows: ["eventful"], runId: "ev", leaseMs: 2_000 }))!;
    await durable.testing.advanceClock("3s");
    expect((await durable.status("ev"))!.status).toBe("pending");

    // Another dead owner; this time the next claim (a tick) heals it, runs "quick" and yields before "slow".
    const second = (await claimDueRun(db, { workflows: ["eventful"], runId: "ev", leaseMs: 2_000 }))!;
    await durable.testing.advanceClock("3s");
    expect(await durable.advance("ev", { budgetMs: 10_000 })).toBe("yielded");

    // "slow" runs, "flaky" fails for good; the run is retried and then parks on the "go" signal.
    // 60 s: "slow" (20 s) and "flaky" (the default 30 s) both fit, with their margins.
    expect(await durable.advance("ev", { budgetMs: 60_000 })).toBe("failed");
    failFlaky = false;
    await durable.retry("ev");
    expect(await durable.advance("ev", { budgetMs: 60_000 })).toBe("waiting");
    await durable.cancel("ev", "the operator said so");
    await durable.cancel("other");

    const events = await durable.events("ev");
    expect(events.map((e) => e.kind)).toEqual(["heal", "heal", "budget.yield", "retry", "cancel"]);
    const [readHeal, claimHeal, yielded, retried, cancelled] = events;
    // The fence of a heal is the one it moved to; a yield carries the owner's.
    expect(readHeal).toMatchObject({
      kind: "heal",
      stepId: null,
      fence: first.run.fence + 1,
      data: { by: "read" },
    });
    expect(Date.parse(readHeal!.data.leaseExpiredAt as string)).toBe(first.run.leaseUntil!.getTime());
    expect(claimHeal).toMatchObject({ kind: "heal", stepId: null, fence: second.run.fence + 1, data: { by: "claim" } });
    expect(Date.parse(claimHeal!.data.leaseExpiredAt as string)).toBe(second.run.leaseUntil!.getTime());
    expect(yielded).toMatchObject({ kind: "budget.yield", stepId: "slow", fence: claimHeal!.fence, data: {} });
    expect(retried).toMatchObject({ kind: "retry", stepId: null, fence: null, data: {} });
    expect(cancelled).toMatchObject({
      kind: "cancel",
      stepId: null,
      fence: null,
      data: { reason: "the operator said so", from: "waiting" },
    });
    // Ids grow; times are dates from the database clock, in the same order.
    for (let i = 1; i < events.length; i++) {
      expect(events[i]!.id).toBeGreaterThan(events[i - 1]!.id);
      expect(events[i]!.at.getTime()).toBeGreaterThanOrEqual(events[i - 1]!.at.getTime());
    }
    expect(events.every((e) => e.at instanceof Date && Number.isFinite(e.at.getTime()))).toBe(true);
    // The clock was moved 6 s by now: the first heal is at least 3 s after the run started.
    const status = (await durable.status("ev"))!;
    expect(readHeal!.at.getTime() - Date.parse(status.createdAt)).toBeGreaterThanOrEqual(3_000);

    // Another run's events are its own.
    expect(await durable.events("other")).toMatchObject([
      { kind: "cancel", stepId: null, fence: null, data: { reason: null, from: "pending" } },
    ]);
  });

  it("pages with limit and after", async () => {
    const all = await durable.events("ev");
    expect(all).toHaveLength(5);
    const page1 = await durable.events("ev", { limit: 2 });
    expect(page1.map((e) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    const page2 = await durable.events("ev", { after: page1.at(-1)!.id, limit: 2 });
    expect(page2.map((e) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    const page3 = await durable.events("ev", { after: page2.at(-1)!.id, limit: 2 });
    expect(page3.map((e) => e.kind)).toEqual(["cancel"]);
    expect(await durable.events("ev", { after: page3.at(-1)!.id })).toEqual([]);
    // `after` is an event id, not a position: the other run's event ids do not count.
    expect(await durable.events("ev", { after: 0, limit: 1000 })).toEqual(all);
  });

  it("refuses bad options, and answers [] for a run it does not know", async () => {
    for (const options of [
      { after: -1 },
      { after: 1.5 },
      { after: Number.NaN },
      { limit: 0 },
      { limit: 1001 },
      { limit: 2.5 },
    ]) {
      await expect(durable.events("ev", options), JSON.stringify(options)).rejects.toThrow(InvalidInputError);
    }
    expect(await durable.events("no-such-run")).toEqual([]);
    // Names the engine can never store are unknown runs too, not errors.
    expect(await durable.events("")).toEqual([]);
    expect(await durable.events("a\u0000b")).toEqual([]);
    expect(await durable.events("x".repeat(300))).toEqual([]);
  });
});

// How the run page words each kind the SQL writes (app/components/run-timeline.tsx).
describe("the timeline's words for each event kind", () => {
  const event = (kind: string, stepId: string | null, data: Record<string, unknown>) =>
    describeEvent({ id: 1, kind, stepId, fence: 3, data, at: "2025-03-01T12:00:00.000Z" });

  it("says what happened in plain words", () => {
    const heal = event("heal", null, { by: "claim", leaseExpiredAt: "2025-03-01T13:03:04.5+01:00" });
    expect(heal.title).toBe("Healed");
    expect(heal.detail).toContain("the lease ran out at 12:03:04 UTC and a claim took the run over");
    expect(event("heal", null, { by: "read", leaseExpiredAt: null }).detail).toContain("a status read gave it back");
    expect(event("budget.yield", "slow", {})).toMatchObject({
      title: "Given back",
      detail: expect.stringContaining('the budget could not fit step "slow"'),
    });
    expect(event("fence.rejected", null, { write: "finish" })).toMatchObject({
      title: "Refused a late write",
      detail: "an owner that had lost the run tried to finish the run",
    });
    expect(event("fence.rejected", "charge", { late: "completed", recorded: null }).detail).toBe(
      'an owner that had lost the run tried to record step "charge" as completed',
    );
    expect(event("fence.rejected", "reserve", { write: "tx", late: "completed" }).detail).toContain(
      'record step "reserve" as completed with its transaction',
    );
    expect(event("step.outcome-conflict", "charge", { recorded: "completed", late: "failed" })).toMatchObject({
      title: 'Outcome conflict on step "charge"',
      detail: "recorded completed, late failed: the recorded outcome stands",
    });
    expect(event("cancel", null, { reason: "duplicate order", from: "waiting" })).toMatchObject({
      title: "Cancelled",
      detail: "duplicate order (it was waiting)",
    });
    expect(event("cancel", null, { reason: null, from: "pending" }).detail).toBe("no reason given (it was pending)");
    expect(event("retry", null, {}).title).toBe("Retried");
    expect(event("version.unknown", null, { version: "2" }).title).toBe("Unknown version 2");
    expect(event("fork", null, { from: "order-1", fromStep: "charge", copied: 2 })).toMatchObject({
      title: "Forked",
      detail: 'from run order-1 at step "charge": 2 receipts copied, replayed rather than run again',
    });
    expect(event("fork", null, { from: "order-1", fromStep: "charge", copied: 1, edited: 1 }).detail).toBe(
      'from run order-1 at step "charge": 1 receipt copied, replayed rather than run again; 1 edited',
    );
    expect(event("step.edited", "quote", { from: "order-1", reason: "garbage quote" })).toMatchObject({
      title: 'Edited step "quote"',
      detail: "its receipt carries a value given at the fork of run order-1: garbage quote",
    });
    expect(event("step.edited", "quote", { from: "order-1", reason: null }).detail).toContain("no reason given");
    expect(event("something.new", null, { a: 1 })).toMatchObject({ title: "something.new", detail: '{"a":1}' });
  });
});
