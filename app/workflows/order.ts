import { createHash } from "node:crypto";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { formatMoney, refund } from "../mock-providers/payments";
import { orderPayment } from "./order-payment";
import { orderShipping } from "./order-shipping";
import { toStepError } from "./provider-errors";

const PRICES: Record<string, number> = { mug: 1200, tee: 2500, poster: 900 };

/** What the customer sends to the approval link: `{ "approved": true }`, or false to decline. */
export const orderApproval = z.object({ approved: z.boolean(), by: z.string().max(100).optional() });

/**
 * An order made of runs (docs/guide/composition.md): the payment and the shipping are child runs,
 * invoked together (one suspension waits for both; each one's end wakes the order). Then the
 * customer approves through a callback URL, raced against a 2-minute timeout ("Races"): declined
 * or too late, the charge is refunded. The whole order has a 10-minute deadline ("Deadlines").
 */
export const order = defineWorkflow({
  name: "order",
  deadline: "10m",
  input: z.object({
    item: z.enum(["mug", "tee", "poster"]).default("mug"),
    quantity: z.number().int().min(1).max(5).default(1),
    customer: z.string().min(1).max(200).default("ada@example.com"),
  }),
  async run(ctx, input) {
    // Named by the run, so the children are the first steps: both reach the suspension together.
    const orderId = `ord_${createHash("sha256").update(ctx.runId).digest("hex").slice(0, 12)}`;
    const amountCents = PRICES[input.item]! * input.quantity;
    const [payment, shipping] = await Promise.all([
      ctx.step.invoke("payment", orderPayment, { orderId, amountCents }),
      ctx.step.invoke("shipping", orderShipping, { orderId, item: input.item, quantity: input.quantity }),
    ]);

    // The link a confirmation email would carry; the run page shows it to the operator.
    const link = await ctx.step.callback("approval-link", { schema: orderApproval });
    const answer = await ctx.step.waitForAny("approval", {
      approval: { callback: link },
      timeout: { sleep: "2m" },
    });
    const amount = formatMoney(amountCents);
    if (answer.branch === "approval" && answer.value?.approved) {
      return {
        orderId,
        status: "confirmed",
        approvedBy: answer.value.by ?? input.customer,
        amount,
        chargeId: payment.chargeId,
        trackingNumber: shipping.trackingNumber,
      };
    }
    await ctx.step.run(
      "refund-payment",
      (s) =>
        refund({
          runId: ctx.runId,
          reference: payment.chargeId,
          amountCents: payment.amountCents,
          currency: "EUR",
          idempotencyKey: s.externalKey,
        }).catch(toStepError),
      { retries: 4, retryDelay: "500ms", retryBackoff: { factor: 2, maxDelay: "4s" } },
    );
    const declined = answer.branch === "approval";
    return {
      orderId,
      status: declined ? "declined" : "expired",
      reason: declined
        ? "the customer declined the order; refunded"
        : "the customer did not approve within 2 minutes; refunded",
      amount,
    };
  },
});
