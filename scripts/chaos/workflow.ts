// The workflow every chaos scenario runs: an external effect delivered to a sink that dedups by
// external key (the outside world), a database effect in a tx step, and a journaled value.
import { sql } from "kysely";
import type pg from "pg";
import { z } from "zod";
import { defineWorkflow } from "../../lib/durable";

let sink: pg.Pool | null = null;

/** The outside world's connection: separate from the engine's, like a provider's API. */
export function attachSink(pool: pg.Pool) {
  sink = pool;
}

const pause = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export const chaosOrder = defineWorkflow({
  name: "chaos-order",
  input: z.object({ work: z.array(z.number()).length(2).default([0, 0]) }),
  async run(ctx, input) {
    const delivered = await ctx.step.run(
      "deliver",
      async (s) => {
        await pause(input.work[0]!);
        await sink!.query(
          `insert into chaos_sink (external_key) values ($1)
         on conflict (external_key) do update set deliveries = chaos_sink.deliveries + 1`,
          [s.externalKey],
        );
        return s.attempt;
      },
      { lease: "1s" },
    );
    await ctx.step.tx(
      "reserve",
      async (tx) => {
        await pause(input.work[1]!);
        await sql`insert into chaos_effects (run_id, step_id, fence) values (${ctx.runId}, 'reserve', 0)`.execute(tx);
      },
      { lease: "1s" },
    );
    const stamp = await ctx.step.value("stamp", () => Math.random());
    return { delivered, stamp };
  },
});

export const chaosExpectation = { stepsPerRun: 3, txSteps: ["reserve"], sinkSteps: ["deliver"], retries: 0 };
