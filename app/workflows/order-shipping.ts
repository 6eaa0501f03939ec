import { createHash } from "node:crypto";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";

/**
 * The order's shipping, a child run of `order` (docs/guide/composition.md, "Child runs"): books a
 * courier (here: a tracking number drawn from the step's external key, the same on every retry),
 * then waits a second for the label, so a parent's page shows the child running beside the payment.
 */
export const orderShipping = defineWorkflow({
  name: "order-shipping",
  input: z.object({
    orderId: z.string().min(1).max(100),
    item: z.string().min(1).max(100),
    quantity: z.number().int().min(1).max(5),
  }),
  output: z.object({ trackingNumber: z.string(), carrier: z.string() }),
  async run(ctx, input) {
    const booking = await ctx.step.run("book-courier", (s) => ({
      trackingNumber: `TRK-${createHash("sha256").update(s.externalKey).digest("hex").slice(0, 10).toUpperCase()}`,
      carrier: input.quantity > 2 ? "freight" : "parcel",
    }));
    await ctx.step.sleep("print-label", "1s");
    return booking;
  },
});
