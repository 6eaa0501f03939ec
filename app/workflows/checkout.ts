import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import * as z from "zod";
import { defineWorkflow, FatalStepError, type Jsonified } from "@/lib/durable";
import { charge, formatMoney, refund } from "../mock-providers/payments";
import { toStepError } from "./provider-errors";

const retries = { retries: 4, retryDelay: "500ms", retryBackoff: { factor: 2, maxDelay: "4s" } } as const;

/**
 * Checkout saga. Stock is reserved exactly once (a `tx` step: the update, the order row and the
 * receipt commit together); the card is charged at least once, with the step's external key as the
 * provider's idempotency key, so a retry after a lost response never charges twice; the order is
 * final only when the provider's `payment.settled` webhook arrives. If it never does, the saga
 * compensates in reverse: refund, then release the stock.
 */
export const checkout = defineWorkflow({
  name: "checkout",
  input: z.object({
    sku: z.enum(["mug", "tee", "poster"]).default("mug"),
    quantity: z.number().int().min(1).max(5).default(1),
    customer: z.string().min(1).max(200).default("ada@example.com"),
  }),
  signals: { "payment.settled": z.object({ chargeId: z.string(), amountCents: z.number().int() }) },
  async run(ctx, input) {
    const orderId = await ctx.step.value("order-id", () => `ord_${randomBytes(6).toString("hex")}`);

    const order = await ctx.step.tx("reserve-stock", async (tx) => {
      const { rows } = await sql<{ price_cents: number }>`
        update demo_inventory set reserved = reserved + ${input.quantity}
        where sku = ${input.sku} and on_hand - reserved >= ${input.quantity}
        returning price_cents`.execute(tx);
      if (!rows[0]) throw new FatalStepError(`"${input.sku}" is out of stock`);
      const amountCents = rows[0].price_cents * input.quantity;
      await sql`
        insert into demo_orders (id, run_id, sku, quantity, amount_cents, status)
        values (${orderId}, ${ctx.runId}, ${input.sku}, ${input.quantity}, ${amountCents}, 'reserved')`.execute(tx);
      return { amountCents };
    });
    // What an operator looks for later (the run page shows it; `durable.list({ metadata })` finds it).
    ctx.setMetadata({ orderId, sku: input.sku, stage: "reserved" });

    const releaseStock = (id: string, status: string) =>
      ctx.step.tx(id, async (tx) => {
        await sql`update demo_inventory set reserved = reserved - ${input.quantity} where sku = ${input.sku}`.execute(
          tx,
        );
        await sql`update demo_orders set status = ${status}, updated_at = now() where id = ${orderId}`.execute(tx);
        return { released: input.quantity };
      });

    let payment: Jsonified<Awaited<ReturnType<typeof charge>>>;
    try {
      payment = await ctx.step.run(
        "charge-card",
        (s) =>
          charge({
            runId: ctx.runId,
            reference: orderId,
            amountCents: order.amountCents,
            currency: "EUR",
            idempotencyKey: s.externalKey,
          }).catch(toStepError),
        retries,
      );
    } catch (error) {
      // Retries spent: undo the reservation (the recorded failure is thrown again on every replay).
      await releaseStock("release-stock", "payment_failed");
      return { orderId, status: "payment_failed", reason: (error as Error).message };
    }

    ctx.setMetadata({ stage: "charged", chargeId: payment.id });
    const settled = await ctx.step.waitForSignal("payment.settled", { timeout: "15m" });
    if (!settled) {
      await ctx.step.run(
        "refund-charge",
        (s) =>
          refund({
            runId: ctx.runId,
            reference: payment.id,
            amountCents: payment.amountCents,
            currency: "EUR",
            idempotencyKey: s.externalKey,
          }).catch(toStepError),
        retries,
      );
      await releaseStock("release-stock", "cancelled");
      ctx.setMetadata({ stage: "refunded" });
      return { orderId, status: "cancelled", reason: "the payment did not settle within 15 minutes; refunded" };
    }

    await ctx.step.tx("finalise-order", async (tx) => {
      await sql`
        update demo_inventory set on_hand = on_hand - ${input.quantity}, reserved = reserved - ${input.quantity}
        where sku = ${input.sku}`.execute(tx);
      await sql`
        update demo_orders set status = 'confirmed', charge_id = ${payment.id}, updated_at = now()
        where id = ${orderId}`.execute(tx);
      return { confirmed: orderId };
    });
    ctx.setMetadata({ stage: "confirmed" });
    return { orderId, status: "confirmed", chargeId: payment.id, amount: formatMoney(order.amountCents) };
  },
});
