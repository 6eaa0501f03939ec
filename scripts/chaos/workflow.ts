// The workflow every chaos scenario runs: an external effect delivered to a sink that dedups by
// external key (the outside world), a database effect in a tx step, and a journaled value.
import { sql } from "kysely";
import type pg from "pg";
import { z } from "zod";
import { defineWorkflow, lifecycleInput, type WorkflowContext } from "../../lib/durable";

let sink: pg.Pool | null = null;

/** The outside world's connection: separate from the engine's, like a provider's API. */
export function attachSink(pool: pg.Pool) {
  sink = pool;
}

const pause = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

const work = z.array(z.number()).length(2).default([0, 0]);

/** The chaos order's body: a sink delivery, a tx effect and a journaled value. */
async function orderBody(ctx: WorkflowContext, input: { work: number[] }) {
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
}

export const chaosOrder = defineWorkflow({
  name: "chaos-order",
  input: z.object({ work }),
  run: orderBody,
});

export const chaosExpectation = { stepsPerRun: 3, txSteps: ["reserve"], sinkSteps: ["deliver"], retries: 0 };

/** Children each chaos parent invokes at once. */
export const CHAOS_CHILDREN = 3;

/**
 * A parent of chaos orders (docs/guide/composition.md, "Child runs" and "Races"): three invoked at
 * once (one suspension inserts them), one more started and raced against a signal and a sleep,
 * then a tx effect of its own. Its output repeats what the children answered.
 */
export const chaosParent = defineWorkflow({
  name: "chaos-parent",
  input: z.object({ work: z.array(z.number()).length(2).default([0, 0]) }),
  async run(ctx, input) {
    const outs = await Promise.all(
      Array.from({ length: CHAOS_CHILDREN }, (_, i) => ctx.step.invoke(`c${i}`, chaosOrder, { work: input.work })),
    );
    const late = await ctx.step.start("late", chaosOrder, { work: input.work });
    const race = await ctx.step.waitForAny("race", {
      late: { run: late.id },
      go: { signal: "go" },
      nap: { sleep: "3s" },
    });
    await ctx.step.tx(
      "reserve",
      async (tx) => {
        await sql`insert into chaos_effects (run_id, step_id, fence) values (${ctx.runId}, 'reserve', 0)`.execute(tx);
      },
      { lease: "1s" },
    );
    return { delivered: outs.map((o) => o.delivered), race: race.branch };
  },
});

/** What a run ended with: scenario 14's lifecycle hook (docs/guide/lifecycle.md), one receipt. */
export const chaosEnded = defineWorkflow({
  name: "chaos-ended",
  input: lifecycleInput,
  async run(ctx, input) {
    await ctx.step.value("seen", () => `${input.workflow} ${input.status}`);
    return { ended: input.id };
  },
});

const orderEvent = z.object({ n: z.number().int(), vip: z.boolean(), work });

/** Scenario 14's subscribers (docs/guide/events.md): every `chaos.order`, and the VIP ones again. */
export const chaosOnOrder = defineWorkflow({
  name: "chaos-on-order",
  input: orderEvent,
  on: "chaos.order",
  onComplete: chaosEnded,
  onFailure: chaosEnded,
  run: orderBody,
});

export const chaosOnVip = defineWorkflow({
  name: "chaos-on-vip",
  input: orderEvent,
  on: { event: "chaos.order", match: { vip: true } },
  onComplete: chaosEnded,
  onFailure: chaosEnded,
  run: orderBody,
});

/** Waits for its order's `chaos.paid` event (published since the run started), one receipt. */
export const chaosWaiter = defineWorkflow({
  name: "chaos-waiter",
  input: z.object({ n: z.number().int() }),
  onComplete: chaosEnded,
  onFailure: chaosEnded,
  async run(ctx, input) {
    const paid = await ctx.step.waitForEvent("paid", "chaos.paid", {
      match: { n: input.n },
      since: "run",
      timeout: "10m",
    });
    return { paid };
  },
});

/** Every chaos workflow, as the workers and the drain register them. */
export const chaosWorkflows = [chaosOrder, chaosParent, chaosEnded, chaosOnOrder, chaosOnVip, chaosWaiter];

/**
 * The outbound webhook of scenario 14, when the harness sets CHAOS_WEBHOOK_URL and
 * CHAOS_WEBHOOK_SECRET (workers and the drain read them, as every deployment reads its config).
 */
export const chaosWebhooks = () =>
  process.env.CHAOS_WEBHOOK_URL
    ? [
        {
          url: process.env.CHAOS_WEBHOOK_URL,
          events: ["run.completed", "run.failed", "run.cancelled"] as const,
          secret: process.env.CHAOS_WEBHOOK_SECRET!,
        },
      ]
    : undefined;

/** A parent's receipts: its invokes, the start, the race and its tx step. */
export const composeExpectation = {
  ...chaosExpectation,
  stepsPerWorkflow: { "chaos-parent": CHAOS_CHILDREN + 3 },
};
