import { randomInt } from "node:crypto";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { formatMoney, refund } from "../mock-providers/payments";
import { toStepError } from "./provider-errors";

const CUSTOMERS = [
  "Ada Lovelace",
  "Grace Hopper",
  "Alan Turing",
  "Katherine Johnson",
  "Edsger Dijkstra",
  "Barbara Liskov",
  "Donald Knuth",
];

interface PlanItem {
  id: string;
  customer: string;
  chargeRef: string;
  amountCents: number;
}

/** Drafts the refunds from what is true now (here: random); the plan is journaled once. */
function draftRefundPlan(): { items: PlanItem[]; draftedAt: string } {
  const pool = [...CUSTOMERS];
  const items: PlanItem[] = [];
  for (let i = 0; i < 3; i++) {
    const customer = pool.splice(randomInt(pool.length), 1)[0]!;
    const id = customer.toLowerCase().replace(/[^a-z]+/g, "-");
    items.push({
      id,
      customer,
      chargeRef: `ch_${randomInt(1e9).toString(36)}`,
      amountCents: 500 + randomInt(60) * 100,
    });
  }
  return { items, draftedAt: new Date().toISOString() };
}

/**
 * Approval with a plan frozen at start. The refunds are drafted once and journaled
 * (`ctx.step.value`): whenever the approver answers, within 7 days, the run executes exactly the
 * plan they saw, even if the data it was drawn from changed meanwhile. Each refund is its own step,
 * so each leaves a receipt as it executes and a crash midway never refunds anyone twice.
 */
export const planApproval = defineWorkflow({
  name: "plan-approval",
  input: z.object({
    title: z.string().min(1).max(120).default("Refunds for the delayed March shipment"),
    requestedBy: z.string().min(1).max(100).default("support@example.com"),
  }),
  signals: { decision: z.object({ approved: z.boolean(), by: z.string().max(100).optional() }) },
  async run(ctx, input) {
    const plan = await ctx.step.value("plan", draftRefundPlan);
    const total = formatMoney(plan.items.reduce((sum, item) => sum + item.amountCents, 0));

    const decision = await ctx.step.waitForSignal("decision", { timeout: "7d" });
    if (!decision) return { title: input.title, status: "expired", reason: "no decision within 7 days", total };
    if (!decision.approved) return { title: input.title, status: "rejected", by: decision.by ?? null, total };

    const refunds = [];
    for (const item of plan.items) {
      const done = await ctx.step.run(
        `refund:${item.id}`,
        (s) =>
          refund({
            runId: ctx.runId,
            reference: item.chargeRef,
            amountCents: item.amountCents,
            currency: "EUR",
            idempotencyKey: s.externalKey,
          }).catch(toStepError),
        { retries: 3, retryDelay: "500ms", retryBackoff: { factor: 2 } },
      );
      refunds.push({ customer: item.customer, amount: formatMoney(item.amountCents), refundId: done.id });
    }
    return { title: input.title, status: "executed", approvedBy: decision.by ?? null, total, refunds };
  },
});
