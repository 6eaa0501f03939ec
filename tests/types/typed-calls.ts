// Type tests: `tsc --noEmit` (CI runs it) fails when a type regresses. Nothing here runs: the
// file is not a *.test.ts, and every call sits in a function that is never called.
import { expectTypeOf } from "vitest";
import { z } from "zod";
import { type Durable, defineWorkflow, type RunStatus } from "@/lib/durable";

const approval = defineWorkflow({
  name: "approval",
  input: z.object({ docId: z.string(), amount: z.number().default(0) }),
  signals: {
    decision: z.object({ approved: z.boolean(), by: z.string().optional() }),
    comment: z.object({ text: z.string() }),
  },
  async run(ctx, input) {
    expectTypeOf(input).toEqualTypeOf<{ docId: string; amount: number }>();
    const decision = await ctx.step.waitForSignal("decision", { timeout: "7d" });
    expectTypeOf(decision).toEqualTypeOf<{ approved: boolean; by?: string | undefined } | null>();
    const comment = await ctx.step.waitForSignal("comment", { id: "comment-1" });
    expectTypeOf(comment).toEqualTypeOf<{ text: string } | null>();
    // @ts-expect-error: "decison" is not a signal this workflow declares
    await ctx.step.waitForSignal("decison");
    return { approved: decision?.approved ?? false, at: new Date() };
  },
});

const open = defineWorkflow({
  name: "open",
  input: z.object({}),
  async run(ctx) {
    // No signals declared: any name, an unknown payload unless a schema says more.
    expectTypeOf(await ctx.step.waitForSignal("anything")).toEqualTypeOf<unknown>();
    const typed = await ctx.step.waitForSignal("anything-else", { schema: z.object({ n: z.number() }) });
    expectTypeOf(typed).toEqualTypeOf<{ n: number } | null>();
    return 1;
  },
});

export async function typedCalls(durable: Durable) {
  // start: the input of the workflow it names (zod's input type: defaults may be left out).
  await durable.start(approval, { docId: "d-1" });
  // @ts-expect-error: docId must be a string
  await durable.start(approval, { docId: 1 });

  // status: output typed when the call names the workflow (after the JSON round trip).
  const status = await durable.status("d-1", { workflow: approval });
  expectTypeOf(status).toEqualTypeOf<RunStatus<{ approved: boolean; at: string }> | null>();
  expectTypeOf((await durable.status("d-1"))!.output).toEqualTypeOf<unknown>();

  // signal: name and payload typed when the call names the workflow.
  await durable.signal({ workflow: approval, runId: "d-1", name: "decision", payload: { approved: true } });
  // @ts-expect-error: the payload of "decision" needs `approved`
  await durable.signal({ workflow: approval, runId: "d-1", name: "decision", payload: { by: "x" } });
  // @ts-expect-error: "nope" is not a signal approval declares
  await durable.signal({ workflow: approval, runId: "d-1", name: "nope", payload: {} });
  // Without the workflow: any name and payload, checked at run time.
  await durable.signal({ runId: "d-1", name: "nope", payload: 1 });
  await durable.signal({ workflow: open, runId: "o-1", name: "whatever", payload: [1] });
}
