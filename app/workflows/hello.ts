import { sql } from "kysely";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";

/**
 * The smallest tour of the step kinds: a journaled value, an external effect (at least once, with
 * its idempotency key) and a database effect that commits with its receipt (exactly once).
 */
export const hello = defineWorkflow({
  name: "hello",
  input: z.object({ name: z.string().min(1).max(100).default("world") }),
  async run(ctx, input) {
    const startedAt = await ctx.step.value("started-at", () => new Date().toISOString());
    const greeting = await ctx.step.run("compose", (s) => {
      ctx.log(`composing a greeting (idempotency key ${s.externalKey}, attempt ${s.attempt})`);
      return `Hello, ${input.name}!`;
    });
    const greeted = await ctx.step.tx("count", async (tx) => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from durable_runs where workflow = 'hello' and status = 'completed'`.execute(tx);
      return rows[0]!.n + 1;
    });
    return { greeting, startedAt, greeted };
  },
});
