// Type tests of composition (docs/guide/composition.md): invoke, start, waitForAny, callbacks,
// startMany and cancel. `npm test` type-checks this file (vitest.config.ts, `typecheck`:
// tests/types/tsconfig.json); nothing in it runs. A wrong `expectTypeOf` or an unused
// `@ts-expect-error` fails the run.
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { type Durable, defineWorkflow, type StartResult } from "@/lib/durable";
import type { CallbackHandle, ChildRun, Jsonified, RunOutcome } from "@/lib/durable/types";

const childOutput = z.object({ doubled: z.number(), at: z.date(), tag: z.string().default("none") });
const child = defineWorkflow({
  name: "child",
  input: z.object({ n: z.number(), label: z.string().default("none") }),
  output: childOutput,
  async run(_ctx, input) {
    return { doubled: input.n * 2, at: new Date(), tag: input.label };
  },
});

/** What a parent gets: the schema's output (the default applied), a Date as its ISO string. */
type ChildAnswer = { doubled: number; at: string; tag: string };

describe("ctx.step.invoke", () => {
  test("answers the child's output after the JSON round trip", () => {
    defineWorkflow({
      name: "parent",
      input: z.object({}),
      async run(ctx) {
        const out = await ctx.step.invoke("c", child, { n: 1 }, { id: "child-1", timeout: "1h" });
        expectTypeOf(out).toEqualTypeOf<ChildAnswer>();
        expectTypeOf(out).toEqualTypeOf<Jsonified<z.output<typeof childOutput>>>();
        const many = await Promise.all([1, 2].map((n) => ctx.step.invoke(`c${n}`, child, { n })));
        expectTypeOf(many).toEqualTypeOf<ChildAnswer[]>();
        return null;
      },
    });
  });

  test("takes the child's input (zod's input type: defaults may be left out)", () => {
    defineWorkflow({
      name: "parent-input",
      input: z.object({}),
      async run(ctx) {
        await ctx.step.invoke("ok", child, { n: 1, label: "x" });
        // @ts-expect-error: n is a number
        await ctx.step.invoke("bad", child, { n: "1" });
        // @ts-expect-error: n is required
        await ctx.step.invoke("missing", child, {});
        // @ts-expect-error: timeout is a Duration, not a Date
        await ctx.step.invoke("bad-timeout", child, { n: 1 }, { timeout: new Date() });
        return null;
      },
    });
  });

  test("ctx.step.start answers the child's id and status token", () => {
    defineWorkflow({
      name: "starter",
      input: z.object({}),
      async run(ctx) {
        const started = await ctx.step.start("s", child, { n: 1 }, { id: "child-s" });
        expectTypeOf(started).toEqualTypeOf<ChildRun>();
        expectTypeOf(started.statusToken).toEqualTypeOf<string>();
        // @ts-expect-error: start takes the child's input too
        await ctx.step.start("s2", child, { n: true });
        return null;
      },
    });
  });
});

describe("ctx.step.waitForAny", () => {
  test("answers a union discriminated by branch, each value typed by its branch", () => {
    defineWorkflow({
      name: "racer",
      input: z.object({}),
      signals: { approve: z.object({ by: z.string(), note: z.string().default("") }), cancel: z.null() },
      async run(ctx) {
        const cb = await ctx.step.callback("cb", { schema: z.object({ ok: z.boolean() }) });
        const won = await ctx.step.waitForAny("race", {
          a: { signal: "approve" },
          t: { sleep: "1h" },
          u: { until: new Date() },
          r: { run: "other-run" },
          c: { callback: cb },
        });
        expectTypeOf(won).toEqualTypeOf<
          | { branch: "a"; value: { by: string; note: string } }
          | { branch: "t"; value: null }
          | { branch: "u"; value: null }
          | { branch: "r"; value: RunOutcome }
          | { branch: "c"; value: { ok: boolean } | null }
        >();
        if (won.branch === "a") expectTypeOf(won.value.by).toEqualTypeOf<string>();
        if (won.branch === "r") expectTypeOf(won.value.status).toEqualTypeOf<"completed" | "failed" | "cancelled">();
        if (won.branch === "c") expectTypeOf(won.value).toEqualTypeOf<{ ok: boolean } | null>();
        return null;
      },
    });
  });

  test("a signal branch names a signal the workflow declares", () => {
    defineWorkflow({
      name: "racer-names",
      input: z.object({}),
      signals: { approve: z.object({ by: z.string() }) },
      async run(ctx) {
        await ctx.step.waitForAny("ok", { a: { signal: "approve" }, t: { sleep: 1000 } });
        // @ts-expect-error: "aprove" is not a signal this workflow declares
        await ctx.step.waitForAny("typo", { a: { signal: "aprove" }, t: { sleep: "1m" } });
        // @ts-expect-error: a branch is one of signal, sleep, until, run, callback
        await ctx.step.waitForAny("shape", { x: { wait: "1m" } });
        return null;
      },
    });
  });

  test("without declared signals any name is a branch, its payload unknown", () => {
    defineWorkflow({
      name: "racer-open",
      input: z.object({}),
      async run(ctx) {
        const won = await ctx.step.waitForAny("any", { s: { signal: "whatever" }, t: { sleep: "1m" } });
        expectTypeOf(won).toEqualTypeOf<{ branch: "s"; value: unknown } | { branch: "t"; value: null }>();
        return null;
      },
    });
  });
});

describe("callbacks", () => {
  test("waitForCallback answers the payload typed by the callback's schema, or null", () => {
    defineWorkflow({
      name: "callbacks",
      input: z.object({}),
      async run(ctx) {
        const typed = await ctx.step.callback("typed", { timeout: "1d", schema: z.object({ approved: z.boolean() }) });
        expectTypeOf(typed).toEqualTypeOf<CallbackHandle<{ approved: boolean }>>();
        expectTypeOf(typed.url).toEqualTypeOf<string>();
        expectTypeOf(await ctx.step.waitForCallback(typed)).toEqualTypeOf<{ approved: boolean } | null>();
        const untyped = await ctx.step.callback("untyped");
        expectTypeOf(await ctx.step.waitForCallback(untyped)).toEqualTypeOf<unknown>();
        // @ts-expect-error: timeout is a Duration
        await ctx.step.callback("bad", { timeout: true });
        return null;
      },
    });
  });

  test("completeCallback takes a token, any JSON payload and an idempotency key", async () => {
    const durable = {} as Durable;
    const result = await durable.completeCallback("token", { approved: true }, { id: "delivery-1" });
    expectTypeOf(result.delivered).toEqualTypeOf<boolean>();
    expectTypeOf(result.runId).toEqualTypeOf<string>();
    // @ts-expect-error: the idempotency key is a string
    await durable.completeCallback("token", null, { id: 1 });
  });
});

describe("durable.startMany and durable.cancel", () => {
  test("startMany takes the workflow's inputs and answers a StartResult each", async () => {
    const durable = {} as Durable;
    const started = await durable.startMany(child, [{ n: 1 }, { n: 2, label: "b" }], {
      ids: ["a", "b"],
      deadline: "1h",
      ttl: 60_000,
    });
    expectTypeOf(started).toEqualTypeOf<StartResult[]>();
    // @ts-expect-error: n is a number
    await durable.startMany(child, [{ n: 1 }, { n: "2" }]);
    // @ts-expect-error: startMany takes an array of inputs
    await durable.startMany(child, { n: 1 });
    await durable.start(child, { n: 1 }, { id: "x", deadline: "10m", ttl: "1m" });
    // @ts-expect-error: a deadline is a Duration
    await durable.start(child, { n: 1 }, { deadline: new Date() });
  });

  test("cancel takes a reason or { reason, children }", async () => {
    const durable = {} as Durable;
    await durable.cancel("run-1");
    await durable.cancel("run-1", "no longer needed");
    await durable.cancel("run-1", { reason: "no longer needed", children: "keep" });
    await durable.cancel("run-1", { children: "cancel" });
    // @ts-expect-error: children is "cancel" or "keep"
    await durable.cancel("run-1", { children: "orphan" });
    // @ts-expect-error: the reason is a string
    await durable.cancel("run-1", { reason: 1 });
    const list = await durable.list({ parentId: "run-1" });
    expectTypeOf(list.runs[0]!.parentId).toEqualTypeOf<string | null | undefined>();
  });
});
