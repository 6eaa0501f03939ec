import { sql } from "kysely";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { sendEmail } from "../mock-providers/email";
import { toStepError } from "./provider-errors";

const MESSAGES = [
  { key: "welcome", subject: "Welcome aboard" },
  { key: "verify-email", subject: "Confirm your email address" },
  { key: "invoice", subject: "Your first invoice" },
];

/**
 * Outbox delivery. The messages are queued in the same transaction as their receipt (exactly
 * once), then each is sent through a flaky email API with retries and exponential backoff
 * (1 s, 2 s, 4 s…, or the provider's retry-after on a 429). The external key is the email API's
 * idempotency key: when a send times out after the provider accepted it, the retry is deduplicated
 * instead of mailing the customer twice.
 */
export const outboxDelivery = defineWorkflow({
  name: "outbox-delivery",
  input: z.object({ email: z.string().email().max(200).default("grace@example.com") }),
  async run(ctx, input) {
    const queued = await ctx.step.tx("queue-messages", async (tx) => {
      for (const [position, message] of MESSAGES.entries()) {
        await sql`
          insert into demo_outbox (run_id, message_key, position, recipient, subject)
          values (${ctx.runId}, ${message.key}, ${position}, ${input.email}, ${message.subject})
          on conflict do nothing`.execute(tx);
      }
      return MESSAGES.map((message) => message.key);
    });

    const sent: Record<string, string> = {};
    for (const key of queued) {
      const message = MESSAGES.find((m) => m.key === key)!;
      const result = await ctx.step.run(
        `deliver:${key}`,
        (s) =>
          sendEmail({
            runId: ctx.runId,
            to: input.email,
            subject: message.subject,
            idempotencyKey: s.externalKey,
          }).catch(toStepError),
        { retries: 5, retryDelay: "1s", retryBackoff: { factor: 2, maxDelay: "8s" } },
      );
      sent[key] = result.messageId;
    }

    await ctx.step.tx("mark-sent", async (tx) => {
      for (const [key, messageId] of Object.entries(sent)) {
        await sql`
          update demo_outbox set status = 'sent', provider_message_id = ${messageId}, sent_at = now()
          where run_id = ${ctx.runId} and message_key = ${key}`.execute(tx);
      }
      return { marked: Object.keys(sent).length };
    });
    return { to: input.email, delivered: Object.keys(sent).length, messageIds: sent };
  },
});
