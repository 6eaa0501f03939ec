// ctx.step.waitForEvent (docs/guide/events.md, "Waiting for an event"), on every database: a wait
// answered by a publish in its statement, by `match`; the timeout's null; `since`; an event
// published while the pass that reached the wait still runs (the suspension finds it); a
// non-matching one seen and passed over; refusals of bad arguments.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

/** The instance the workflows publish through (set by the suite). */
let current: Durable | undefined;

const payment = defineWorkflow({
  name: "await-payment",
  input: z.object({ orderId: z.string(), timeout: z.string().optional(), since: z.enum(["wait", "run"]).optional() }),
  async run(ctx, input) {
    await ctx.step.run("before", () => "ok");
    const paid = await ctx.step.waitForEvent<{ orderId: string; amount: number }>("paid", "payment.settled", {
      match: { orderId: input.orderId },
      ...(input.timeout ? { timeout: input.timeout } : {}),
      ...(input.since ? { since: input.since } : {}),
    });
    return { paid };
  },
});

// Publishes from inside its pass, before it reaches the wait: after the pass's claim, before its
// suspension. `noise` publishes a non-matching event of the name first.
const selfServe = defineWorkflow({
  name: "self-serve",
  input: z.object({ noise: z.boolean(), matching: z.boolean() }),
  async run(ctx, input) {
    await ctx.step.run("ask", async () => {
      if (input.noise) await current!.publish("reply", { to: "someone-else" }, { id: `noise-${ctx.runId}` });
      if (input.matching) await current!.publish("reply", { to: ctx.runId, n: 7 }, { id: `reply-${ctx.runId}` });
    });
    return ctx.step.waitForEvent("reply", "reply", { match: { to: ctx.runId }, timeout: "1h" });
  },
});

const misuse = defineWorkflow({
  name: "event-misuse",
  input: z.object({ how: z.string() }),
  async run(ctx, input) {
    const bad: Record<string, () => Promise<unknown>> = {
      name: () => ctx.step.waitForEvent("w", ""),
      match: () => ctx.step.waitForEvent("w", "e", { match: [1] as never }),
      since: () => ctx.step.waitForEvent("w", "e", { since: "yesterday" as never }),
      timeout: () => ctx.step.waitForEvent("w", "e", { timeout: "soon" }),
      id: () => ctx.step.waitForEvent("", "e"),
    };
    try {
      await bad[input.how]!();
    } catch (error) {
      return { name: (error as Error).name, message: (error as Error).message, invalid: InvalidInputError.is(error) };
    }
    return "accepted";
  },
});

const workflows = [payment, selfServe, misuse];

export function runWaitForEventContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`waitForEvent on ${label}`, () => {
    let db: Kysely<any>;
    let durable: Durable;
    const advance = (id: string) => durable.advance(id, { budgetMs: 10_000 });
    const stepOf = async (runId: string, stepId: string) =>
      (
        await sql<any>`select kind, status, result, signal_name, event_wait from durable_steps
                        where run_id = ${runId} and step_id = ${stepId}`.execute(db)
      ).rows[0];

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows, secrets: { durable: "t" }, defaults: { lease: "2s" }, log: () => {} });
      current = durable;
      await durable.migrate();
    });
    beforeEach(() => resetDurableTables(db));
    afterAll(async () => {
      current = undefined;
      await durable?.close();
    });

    it("a publish answers the waiting step whose match its data contains, in its statement", async () => {
      await durable.start(payment, { orderId: "o-1" }, { id: "p-1" });
      await durable.start(payment, { orderId: "o-2" }, { id: "p-2" });
      expect(await advance("p-1")).toBe("waiting");
      expect(await advance("p-2")).toBe("waiting");
      expect(await durable.status("p-1")).toMatchObject({ waitingFor: { kind: "event", name: "payment.settled" } });
      const wait = await stepOf("p-1", "paid");
      expect(wait).toMatchObject({ kind: "event", status: "waiting", signal_name: "payment.settled" });
      expect(wait.event_wait.match).toEqual({ orderId: "o-1" });

      // Another order's payment, and another name: p-1 stays parked.
      await durable.publish("payment.settled", { orderId: "o-9", amount: 1 }, { id: "pay-9" });
      await durable.publish("payment.failed", { orderId: "o-1" }, { id: "fail-1" });
      expect(await durable.countDue()).toBe(0);

      await durable.publish("payment.settled", { orderId: "o-1", amount: 30, extra: true }, { id: "pay-1" });
      expect(await stepOf("p-1", "paid")).toMatchObject({
        status: "completed",
        result: { data: { orderId: "o-1", amount: 30, extra: true }, eventId: "pay-1" },
      });
      expect(await durable.countDue()).toBe(1);
      expect(await advance("p-1")).toBe("completed");
      expect((await durable.status("p-1"))!.output).toEqual({ paid: { orderId: "o-1", amount: 30, extra: true } });
      // One receipt: a later matching event changes nothing of it.
      await durable.publish("payment.settled", { orderId: "o-1", amount: 99 }, { id: "pay-1b" });
      expect((await stepOf("p-1", "paid")).result.eventId).toBe("pay-1");
      expect((await durable.status("p-2"))!.status).toBe("waiting");
    });

    it("the timeout answers null, and an event after it is not taken", async () => {
      await durable.start(payment, { orderId: "o-3", timeout: "10m" }, { id: "p-3" });
      expect(await advance("p-3")).toBe("waiting");
      await durable.testing.advanceClock("11m");
      await durable.publish("payment.settled", { orderId: "o-3", amount: 1 }, { id: "late-3" });
      expect(await advance("p-3")).toBe("completed");
      expect((await durable.status("p-3"))!.output).toEqual({ paid: null });
      expect((await stepOf("p-3", "paid")).result).toEqual({ timedOut: true });
    });

    it("since: an event before the wait's pass is not taken by default; with since 'run' it is", async () => {
      await durable.start(payment, { orderId: "o-4" }, { id: "p-4" });
      await durable.start(payment, { orderId: "o-5", since: "run" }, { id: "p-5" });
      await durable.publish("payment.settled", { orderId: "o-4", amount: 4 }, { id: "early-4" });
      await durable.publish("payment.settled", { orderId: "o-5", amount: 5 }, { id: "early-5" });
      // PGlite's clock ticks in milliseconds: an event of the claim's own instant counts as after it.
      await durable.testing.advanceClock("1s");
      expect(await advance("p-4")).toBe("waiting");
      // p-5's suspension finds the event it did not see, and the run is due at once.
      expect(await advance("p-5")).toBe("waiting");
      expect(await durable.countDue()).toBe(1);
      expect(await advance("p-5")).toBe("completed");
      expect((await durable.status("p-5"))!.output).toEqual({ paid: { orderId: "o-5", amount: 5 } });
      expect((await durable.status("p-4"))!.status).toBe("waiting");
    });

    it("an event published between the pass's claim and its suspension is not lost", async () => {
      await durable.start(selfServe, { noise: false, matching: true }, { id: "s-1" });
      expect(await advance("s-1")).toBe("waiting");
      expect(await durable.countDue()).toBe(1);
      expect(await advance("s-1")).toBe("completed");
      expect((await durable.status("s-1"))!.output).toEqual({ to: "s-1", n: 7 });
    });

    it("an unseen event that does not match wakes the run once; it passes over it and parks again", async () => {
      await durable.start(selfServe, { noise: true, matching: false }, { id: "s-2" });
      expect(await advance("s-2")).toBe("waiting");
      expect(await durable.countDue()).toBe(1);
      expect(await advance("s-2")).toBe("waiting");
      expect(await durable.countDue()).toBe(0);
      expect((await stepOf("s-2", "reply")).status).toBe("waiting");
      await durable.publish("reply", { to: "s-2", n: 1 }, { id: "late-reply" });
      expect(await advance("s-2")).toBe("completed");
      expect((await durable.status("s-2"))!.output).toEqual({ to: "s-2", n: 1 });
    });

    it("bad arguments throw InvalidInputError into the body, and nothing is written for the wait", async () => {
      for (const how of ["name", "match", "since", "timeout"]) {
        await durable.start(misuse, { how }, { id: `m-${how}` });
        expect(await advance(`m-${how}`), how).toBe("completed");
        const output = (await durable.status(`m-${how}`))!.output as { invalid: boolean; message: string };
        expect(output.invalid, `${how}: ${output.message}`).toBe(true);
        expect(await stepOf(`m-${how}`, "w"), how).toBeUndefined();
      }
      // A step id that cannot be stored fails the run, as it does for every step (docs/rules.md, rule 9).
      await durable.start(misuse, { how: "id" }, { id: "m-id" });
      expect(await advance("m-id")).toBe("failed");
      expect((await durable.status("m-id"))!.error).toMatchObject({ code: "invalid_input" });
    });
  });
}
