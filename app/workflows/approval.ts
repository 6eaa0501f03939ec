import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";

/**
 * A run that waits for a person: it notifies a reviewer, parks until the `decision` signal arrives
 * (POST /api/durable/signal, or the buttons on the home page), then cools off before finishing.
 * While it waits it costs nothing: no process holds it, only its row.
 */
export const approval = defineWorkflow({
  name: "approval",
  input: z.object({ docId: z.string().min(1).max(100) }),
  signals: { decision: z.object({ approved: z.boolean(), by: z.string().max(100).optional() }) },
  async run(ctx, input) {
    const requestedAt = await ctx.step.value("requested-at", () => new Date().toISOString());
    await ctx.step.run("notify-reviewer", (s) => {
      // A real app would call its mailer here with `idempotencyKey: s.externalKey`.
      ctx.log(`asking for a review of ${input.docId} (idempotency key ${s.externalKey})`);
      return { notified: true };
    });
    const decision = await ctx.step.waitForSignal("decision", { timeout: "7d" });
    if (!decision) return { docId: input.docId, approved: false, reason: "no decision within 7 days", requestedAt };
    await ctx.step.sleep("cool-off", "5s");
    return { docId: input.docId, approved: decision.approved, by: decision.by ?? null, requestedAt };
  },
});
