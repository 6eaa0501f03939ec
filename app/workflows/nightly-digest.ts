import { sql } from "kysely";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";

/**
 * A scheduled workflow: every day at 09:00 UTC the tick starts a run with id
 * `nightly-digest@<day>T09:00:00.000Z`, which counts the runs of the last `hours` by workflow and
 * status and writes a one-line summary. The dashboard's Schedules card shows its next slot.
 */
export const nightlyDigest = defineWorkflow({
  name: "nightly-digest",
  input: z.object({ hours: z.number().int().min(1).max(168).default(24) }),
  schedule: { cron: "0 9 * * *", timezone: "UTC", input: { hours: 24 } },
  async run(ctx, input) {
    // A read, journaled: a replay answers the same counts. durable_now() is the clock the runs'
    // times are written on (now(), unless a test moved it).
    const counts = await ctx.step.tx("count-runs", async (tx) => {
      const { rows } = await sql<{ workflow: string; status: string; n: number }>`
        select workflow, status, count(*)::int as n from durable_runs
         where created_at > durable_now() - ${input.hours}::int * interval '1 hour' and id <> ${ctx.runId}
         group by workflow, status
         order by workflow, status`.execute(tx);
      return rows;
    });
    const summary = await ctx.step.run("summarise", () => {
      const total = counts.reduce((sum, row) => sum + row.n, 0);
      const failed = counts.filter((row) => row.status === "failed").reduce((sum, row) => sum + row.n, 0);
      const workflows = new Set(counts.map((row) => row.workflow)).size;
      return total === 0
        ? `No runs in the last ${input.hours} h.`
        : `${total} run${total === 1 ? "" : "s"} of ${workflows} workflow${workflows === 1 ? "" : "s"} ` +
            `in the last ${input.hours} h, ${failed} failed.`;
    });
    return { hours: input.hours, counts, summary };
  },
});
