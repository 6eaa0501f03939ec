import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { charge } from "../mock-providers/payments";
import { toStepError } from "./provider-errors";

/**
 * The order's payment, a child run of `order` (docs/guide/composition.md, "Child runs"): one
 * charge at the mock payment provider, with the step's external key as idempotency key, so the
 * provider's lost responses and failures are retried without charging twice. Its output is what
 * the parent's `ctx.step.invoke` returns.
 */
export const orderPayment = defineWorkflow({
  name: "order-payment",
  input: z.object({
    orderId: z.string().min(1).max(100),
    amountCents: z.number().int().positive(),
  }),
  output: z.object({ chargeId: z.string(), amountCents: z.number().int() }),
  async run(ctx, input) {
    const payment = await ctx.step.run(
      "charge-card",
      (s) =>
        charge({
          runId: ctx.runId,
          reference: input.orderId,
          amountCents: input.amountCents,
          currency: "EUR",
          idempotencyKey: s.externalKey,
        }).catch(toStepError),
      { retries: 4, retryDelay: "500ms", retryBackoff: { factor: 2, maxDelay: "4s" } },
    );
    return { chargeId: payment.id, amountCents: payment.amountCents };
  },
});
