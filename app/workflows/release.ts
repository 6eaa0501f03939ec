import * as z from "zod";
import { approvalDecision, defineWorkflow } from "@/lib/durable";

/**
 * A release that two people other than its author sign off (docs/guide/approvals.md): the
 * `ship` signal is an approval, listed on the dashboard's inbox (/approvals) and decided there,
 * by `durable.decide()`, or by POST /api/durable/signal with an `actor`. One reject stops it.
 */
export const release = defineWorkflow({
  name: "release",
  input: z.object({ service: z.string().min(1).max(100), author: z.string().min(1).max(100) }),
  signals: { ship: approvalDecision },
  approvals: { ship: { quorum: 2, approvers: (actor, input) => actor !== input.author } },
  async run(ctx, input) {
    const decision = await ctx.step.waitForSignal("ship", { timeout: "7d" });
    if (!decision) return { service: input.service, shipped: false, reason: "no decision within 7 days" };
    if (!decision.approved)
      return { service: input.service, shipped: false, by: decision.actor, reason: decision.reason };
    return ctx.step.run("deploy", () => ({ service: input.service, shipped: true, by: decision.actor }));
  },
});
