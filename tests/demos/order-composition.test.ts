// The order demo (app/workflows/order.ts) on the test harness: payment and shipping as child runs
// invoked together, an approval link (a callback URL) raced against a 2-minute timeout, a 10-minute
// deadline. Run to its end both ways: approved through `completeCallback` with the URL that
// `durable.callbacks(runId)` lists for the dashboard, and timed out by moving the database clock 2
// minutes. The URL and its token are never in the run's status, which an end user's browser reads.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachProviderDb } from "@/app/mock-providers/db";
import { order } from "@/app/workflows/order";
import { orderPayment } from "@/app/workflows/order-payment";
import { orderShipping } from "@/app/workflows/order-shipping";
import { ensureAppSchema } from "@/db/app-schema";
import type { RunStatus } from "@/lib/durable";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

let durable: TestDurable;
beforeAll(async () => {
  durable = await createTestDurable({
    workflows: [order, orderPayment, orderShipping],
    baseUrl: "https://shop.example.com",
    async setup(db) {
      await ensureAppSchema(db);
      attachProviderDb(db);
    },
  });
});
afterAll(() => durable.close());

/** Ticks (each claims every due run: the order and its children) until the order's status satisfies `done`. */
async function tickUntil(id: string, done: (run: RunStatus) => boolean): Promise<RunStatus> {
  for (let i = 0; i < 50; i++) {
    const run = (await durable.status(id))!;
    if (done(run)) return run;
    await durable.tick();
  }
  throw new Error(`order ${id} never got there: ${JSON.stringify(await durable.status(id))}`);
}

const waitsForApproval = (run: RunStatus) => run.status === "waiting" && run.waitingFor?.name === "approval";

async function payments(runIds: string[]) {
  const { rows } = await sql<{ kind: string; run_id: string; amount_cents: number }>`
    select kind, run_id, amount_cents from mock_payments where run_id = any(${runIds}) order by created_at`.execute(
    durable.db,
  );
  return rows;
}

describe("order of runs", () => {
  it("invokes payment and shipping, waits on the approval link, and confirms once it is approved", async () => {
    const { id } = await durable.start(order, { item: "tee", quantity: 2 }, { id: "order-approved" });
    const waiting = await tickUntil(id, waitsForApproval);

    // Both children ran as runs of their own, named by the order, and ended before the race began.
    const children = await durable.list({ parentId: id });
    expect(children.runs.map((child) => [child.id, child.workflow, child.status, child.parentId]).sort()).toEqual([
      [`${id}/payment`, "order-payment", "completed", id],
      [`${id}/shipping`, "order-shipping", "completed", id],
    ]);
    expect(waiting.steps.filter((step) => step.kind === "invoke").map((s) => [s.id, s.childId])).toEqual([
      ["payment", `${id}/payment`],
      ["shipping", `${id}/shipping`],
    ]);
    // The deadline: 10 minutes from the start; a child's is never later than its parent's.
    expect(Date.parse(waiting.deadlineAt!) - Date.parse(waiting.createdAt)).toBe(10 * 60_000);
    for (const child of children.runs) {
      expect(child.deadlineAt).not.toBeNull();
      expect(Date.parse(child.deadlineAt!)).toBeLessThanOrEqual(Date.parse(waiting.deadlineAt!));
    }

    // The race's two branches, undecided; the timeout branch wakes 2 minutes after the race began.
    const race = waiting.steps.find((step) => step.id === "approval")!;
    expect(race).toMatchObject({ kind: "any", status: "waiting", winner: null });
    expect(race.branches!.map((b) => [b.name, b.kind])).toEqual([
      ["approval", "callback"],
      ["timeout", "sleep"],
    ]);

    // The dashboard's read: the URL, derived from the callback's id and the secret, on baseUrl.
    const callbacks = await durable.callbacks(id);
    expect(callbacks).toHaveLength(1);
    const [link] = callbacks;
    expect(link).toMatchObject({ stepId: "approval-link", deadlineAt: null, deliveredAt: null });
    expect(link!.url).toBe(`https://shop.example.com/api/durable/callback/${link!.token}`);
    expect(link!.token.startsWith(`${link!.id}.`)).toBe(true);
    expect(race.branches![0]!.target).toBe(link!.id);
    // Not in what the status token reads: neither the URL nor the token.
    expect(JSON.stringify(waiting)).not.toContain(link!.token);
    expect(JSON.stringify(await durable.list({}))).not.toContain(link!.token);
    expect(await durable.callbacks("no-such-run")).toEqual([]);

    const delivered = await durable.completeCallback(link!.token, { approved: true, by: "grace" });
    expect(delivered).toMatchObject({ delivered: true, runId: id });
    const done = await tickUntil(id, (run) => run.status === "completed");
    expect(done.output).toMatchObject({
      status: "confirmed",
      approvedBy: "grace",
      amount: "€50.00",
      chargeId: expect.stringMatching(/^ch_/),
      trackingNumber: expect.stringMatching(/^TRK-/),
    });
    expect(done.steps.find((step) => step.id === "approval")).toMatchObject({
      status: "completed",
      winner: "approval",
    });
    expect((await durable.callbacks(id))[0]!.deliveredAt).toBeInstanceOf(Date);
    // One charge, by the payment child, and no refund.
    expect(await payments([id, `${id}/payment`])).toEqual([
      { kind: "charge", run_id: `${id}/payment`, amount_cents: 5000 },
    ]);
  });

  it("refunds the charge when nobody approves within 2 minutes", async () => {
    const { id } = await durable.start(order, {}, { id: "order-timed-out" });
    await tickUntil(id, waitsForApproval);
    const [link] = await durable.callbacks(id);

    await durable.testing.advanceClock("2m");
    const done = await tickUntil(id, (run) => run.status === "completed");
    expect(done.output).toMatchObject({
      status: "expired",
      reason: "the customer did not approve within 2 minutes; refunded",
      amount: "€12.00",
    });
    expect(done.steps.find((step) => step.id === "approval")).toMatchObject({ status: "completed", winner: "timeout" });
    expect(done.steps.find((step) => step.id === "refund-payment")).toMatchObject({ status: "completed" });
    expect((await payments([id, `${id}/payment`])).map((p) => [p.kind, p.run_id])).toEqual([
      ["charge", `${id}/payment`],
      ["refund", id],
    ]);
    // Too late for the link: its run has ended.
    await expect(durable.completeCallback(link!.token, { approved: true })).rejects.toMatchObject({
      name: "RunStateConflictError",
    });
  });

  it("refunds a declined order, and refuses an answer that is not the approval's shape", async () => {
    const { id } = await durable.start(order, { item: "poster" }, { id: "order-declined" });
    await tickUntil(id, waitsForApproval);
    const [link] = await durable.callbacks(id);
    await expect(durable.completeCallback(link!.token, { approved: "yes" })).rejects.toMatchObject({
      name: "InvalidInputError",
    });
    await durable.completeCallback(link!.token, { approved: false });
    const done = await tickUntil(id, (run) => run.status === "completed");
    expect(done.output).toMatchObject({ status: "declined", reason: "the customer declined the order; refunded" });
    expect(done.steps.find((step) => step.id === "approval")).toMatchObject({ winner: "approval" });
  });

  it("fails with deadline_exceeded once 10 minutes have passed, whatever it waits for", async () => {
    const { id } = await durable.start(order, {}, { id: "order-overdue" });
    await durable.testing.advanceClock("11m");
    const failed = await tickUntil(id, (run) => run.status === "failed");
    expect(failed.error).toMatchObject({ code: "deadline_exceeded" });
  });
});
