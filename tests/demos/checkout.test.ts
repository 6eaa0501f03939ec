// The checkout demo (app/workflows/checkout.ts) on the test harness: stock, charge, webhook, saga.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachProviderDb } from "@/app/mock-providers/db";
import { settle } from "@/app/mock-providers/payments";
import { checkout } from "@/app/workflows/checkout";
import { ensureAppSchema } from "@/db/app-schema";
import { FatalStepError } from "@/lib/durable";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

let durable: TestDurable;
beforeAll(async () => {
  durable = await createTestDurable({
    workflows: [checkout],
    // The app's own tables, as app/durable.ts sets them up.
    async setup(db) {
      await ensureAppSchema(db);
      attachProviderDb(db);
    },
  });
});
afterAll(() => durable.close());

async function stock(sku: string) {
  const { rows } = await sql<{ on_hand: number; reserved: number }>`
    select on_hand, reserved from demo_inventory where sku = ${sku}`.execute(durable.db);
  return rows[0]!;
}

async function order(runId: string) {
  const { rows } = await sql<{ status: string; charge_id: string | null; amount_cents: number }>`
    select status, charge_id, amount_cents from demo_orders where run_id = ${runId}`.execute(durable.db);
  return rows[0];
}

const mockCharge = (runId: string, amountCents: number) =>
  durable.mockStep(
    "charge-card",
    { result: { id: `ch_${runId}`, kind: "charge", reference: "ord", amountCents, currency: "EUR", status: "ok" } },
    { runId },
  );

describe("checkout", () => {
  it("reserves, charges through the provider and confirms on its webhook, delivered twice", async () => {
    const before = await stock("tee");
    const waiting = await durable.run(checkout, { sku: "tee", quantity: 2 }, { id: "co-settled" });
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "payment.settled" } });
    expect(await stock("tee")).toEqual({ on_hand: before.on_hand, reserved: before.reserved + 2 });
    expect(await order("co-settled")).toMatchObject({ status: "reserved", amount_cents: 5000 });

    // The provider settles and sends payment.settled twice with one webhook id: the second is a repeat.
    const outcomes = await settle("co-settled", async (webhookId, payload) => {
      const result = await durable.signal({ runId: "co-settled", name: "payment.settled", payload, id: webhookId });
      return result.alreadyDelivered ? "duplicate" : "delivered";
    });
    expect(outcomes).toEqual(["delivered", "duplicate"]);

    const done = await durable.drive("co-settled");
    expect(done).toMatchObject({ status: "completed", output: { status: "confirmed", amount: "€50.00" } });
    const chargeId = (done.output as { chargeId: string }).chargeId;
    expect(await order("co-settled")).toMatchObject({ status: "confirmed", charge_id: chargeId });
    expect(await stock("tee")).toEqual({ on_hand: before.on_hand - 2, reserved: before.reserved });
    // One charge, though the flaky provider was asked twice: the external key deduplicated them.
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from mock_payments where run_id = 'co-settled' and kind = 'charge'`.execute(durable.db);
    expect(rows[0]!.n).toBe(1);
    const requests = await sql<{ outcome: string }>`
      select outcome from mock_provider_requests
      where run_id = 'co-settled' and operation = 'charge' order by id`.execute(durable.db);
    // The first charge went through and lost its response; the retry was deduplicated, not charged again.
    expect(requests.rows.map((row) => row.outcome)).toEqual(["lost_response", "deduped"]);
    expect(done.steps.find((step) => step.id === "charge-card")).toMatchObject({ attempt: 2 });
  });

  it("refunds and releases the stock when the payment does not settle within 15 minutes", async () => {
    const before = await stock("mug");
    mockCharge("co-unsettled", 1200);
    durable.mockStep("refund-charge", { result: { id: "re_1", status: "succeeded" } }, { runId: "co-unsettled" });
    const waiting = await durable.run(checkout, { sku: "mug" }, { id: "co-unsettled" });
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "payment.settled" } });

    await durable.advanceClock("14m");
    expect(await durable.drive("co-unsettled")).toMatchObject({ status: "waiting" });
    await durable.advanceClock("1m");
    const done = await durable.drive("co-unsettled");
    expect(done).toMatchObject({ status: "completed", output: { status: "cancelled" } });
    expect(done.steps.map((step) => step.id)).toEqual([
      "order-id",
      "reserve-stock",
      "charge-card",
      "payment.settled",
      "refund-charge",
      "release-stock",
    ]);
    expect(await order("co-unsettled")).toMatchObject({ status: "cancelled" });
    expect(await stock("mug")).toEqual(before);
  });

  it("releases the stock when the card is declined, without retrying", async () => {
    const before = await stock("poster");
    durable.mockStep("charge-card", { error: new FatalStepError("card declined") }, { runId: "co-declined" });
    const done = await durable.run(checkout, { sku: "poster", quantity: 3 }, { id: "co-declined" });
    expect(done).toMatchObject({
      status: "completed",
      output: { status: "payment_failed", reason: "card declined" },
    });
    expect(done.steps.find((step) => step.id === "charge-card")).toMatchObject({ status: "failed", attempt: 1 });
    expect(await order("co-declined")).toMatchObject({ status: "payment_failed" });
    expect(await stock("poster")).toEqual(before);
  });

  it("fails the run when the stock is gone, charging nothing", async () => {
    await sql`update demo_inventory set on_hand = reserved + 1 where sku = 'poster'`.execute(durable.db);
    durable.mockStep("charge-card", { error: "must not be called" }, { runId: "co-sold-out" });
    const done = await durable.run(checkout, { sku: "poster", quantity: 2 }, { id: "co-sold-out" });
    expect(done).toMatchObject({ status: "failed", error: { message: '"poster" is out of stock' } });
    expect(done.steps.find((step) => step.id === "charge-card")).toBeUndefined();
    expect(await order("co-sold-out")).toBeUndefined();
  });
});
