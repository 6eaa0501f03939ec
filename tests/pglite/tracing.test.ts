// OpenTelemetry spans of the engine (docs/guide/tracing.md, "Tracing"), on PGlite: an in-memory exporter behind a
// BasicTracerProvider, with the AsyncLocalStorage context manager an SDK such as @vercel/otel
// registers, so that active spans propagate.
import { readFileSync } from "node:fs";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { sql, type Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { TRACER_NAME, TRACER_VERSION } from "@/lib/durable/engine/run/tracing";
import { claimDueRun } from "@/lib/durable/store";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const calls = new Map<string, number>();
const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
function gate(name: string) {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  gates.set(name, { promise, open });
  return gates.get(name)!;
}

const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const a = await ctx.step.run("add-one", () => input.n + 1);
    const b = await ctx.step.tx("record", async (tx) => {
      await sql`insert into tracing_effects (run_id, value) values (${ctx.runId}, ${a})`.execute(tx);
      return a * 2;
    });
    const stamp = await ctx.step.value("stamp", () => `stamp-${Math.random()}`);
    return { b, stamp };
  },
});

const napping = defineWorkflow({
  name: "napping",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("before", () => "ok");
    await ctx.step.sleep("nap", "1h");
    return ctx.step.run("after", () => "done");
  },
});

const flaky = defineWorkflow({
  name: "flaky",
  input: z.object({ failures: z.number() }),
  async run(ctx, input) {
    return ctx.step.run(
      "call",
      (s) => {
        if (s.attempt <= input.failures) throw new Error(`attempt ${s.attempt} failed`);
        return s.attempt;
      },
      { retries: 1, retryDelay: "10ms" },
    );
  },
});

const stalled = defineWorkflow({
  name: "stalled",
  input: z.object({ beat: z.boolean().default(false) }),
  async run(ctx, input) {
    await ctx.step.run("before", () => "ok");
    const charged = await ctx.step.run("charge", async (s) => {
      count(`${ctx.runId}:charge`);
      const held = gates.get(`${ctx.runId}:${s.attempt}`);
      if (held) await held.promise;
      // A stale owner's heartbeat is refused at once; its receipt would be held back (refused later).
      if (input.beat) await s.heartbeat();
      return `charged-${s.attempt}`;
    });
    return ctx.step.run("after", () => charged);
  },
});

// Step "a" finds its own outcome recorded first (as a stale owner's late write would), while "b" is
// in flight so that a's receipt is written at once rather than held back.
let overtakingDb: Kysely<any> | null = null;
const overtaken = defineWorkflow({
  name: "overtaken",
  input: z.object({ last: z.boolean() }),
  async run(ctx, input) {
    const overtake = async () => {
      const db = overtakingDb!;
      const { rows } = await sql<{ fence: number }>`select fence from durable_runs where id = ${ctx.runId}`.execute(db);
      await sql`
        select durable_record_step(${ctx.runId}, ${rows[0]!.fence}::bigint,
          '{"step_id":"a","seq":0,"kind":"run","status":"completed","attempt":1,"result":"recorded first"}'::jsonb
        )`.execute(db);
    };
    if (input.last) {
      // Alone in flight: its receipt is held back and meets the recorded one at the run's end.
      return ctx.step.run("a", async () => {
        if (!calls.has(`${ctx.runId}:a`)) {
          count(`${ctx.runId}:a`);
          await overtake();
        }
        return "mine";
      });
    }
    const [a] = await Promise.all([
      ctx.step.run("a", async () => {
        await overtake();
        return "mine";
      }),
      ctx.step.run("b", () => new Promise((resolve) => setTimeout(() => resolve("b"), 50))),
    ]);
    return a;
  },
});

const workflows = [threeSteps, napping, flaky, stalled, overtaken];

describe("tracing (PGlite)", () => {
  let db: Kysely<any>;
  let durable: Durable;
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider | null = null;

  beforeAll(async () => {
    db = await connect("memory://");
    overtakingDb = db;
    durable = createDurable({
      db,
      workflows,
      secrets: { durable: "test-secret" },
      // A 2 s default lease lets 10 s test budgets claim (a tick needs lease + margin left).
      defaults: { lease: "2s" },
      log: () => {},
    });
    await durable.migrate();
    await sql`create table tracing_effects (run_id text, value int)`.execute(db);
  });

  afterAll(async () => {
    await db.destroy();
  });

  beforeEach(async () => {
    await resetDurableTables(db);
    calls.clear();
    gates.clear();
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });

  afterEach(async () => {
    await provider?.shutdown();
    provider = null;
    trace.disable();
    context.disable();
  });

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  const idOf = (span: ReadableSpan) => span.spanContext().spanId;
  const traceOf = (span: ReadableSpan) => span.spanContext().traceId;
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const stepsOf = (run: ReadableSpan) => named("durable.step").filter((s) => parentOf(s) === idOf(run));
  const eventNames = (span: ReadableSpan) => span.events.map((e) => e.name);
  const attrs = (span: ReadableSpan) => span.attributes;

  it("makes one trace of an invocation: the invocation span, its run, the run's steps", async () => {
    await durable.start(threeSteps, { n: 1 }, { id: "t1" });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, completed: 1 });

    const [invocation, ...moreInvocations] = named("durable.invocation");
    expect(moreInvocations).toEqual([]);
    expect(parentOf(invocation!)).toBeUndefined();
    expect(attrs(invocation!)).toMatchObject({
      "durable.invocation_kind": "tick",
      "durable.claimed": 1,
      "durable.completed": 1,
      "durable.waiting": 0,
      "durable.failed": 0,
      "durable.yielded": 0,
      "durable.healed": 0,
    });
    expect(invocation!.instrumentationScope).toMatchObject({ name: TRACER_NAME, version: TRACER_VERSION });

    const [run, ...moreRuns] = named("durable.run");
    expect(moreRuns).toEqual([]);
    expect(parentOf(run!)).toBe(idOf(invocation!));
    expect(attrs(run!)).toEqual({
      "durable.run_id": "t1",
      "durable.workflow": "three-steps",
      "durable.attempt": 1,
      "durable.is_reclaim": false,
      "durable.outcome": "completed",
    });
    expect(run!.events).toEqual([]);

    const steps = stepsOf(run!);
    expect(steps).toHaveLength(3);
    expect(named("durable.step")).toHaveLength(3);
    expect(steps.map((s) => attrs(s))).toEqual(
      [
        ["add-one", "run"],
        ["record", "tx"],
        ["stamp", "value"],
      ].map(([id, kind]) => ({
        "durable.run_id": "t1",
        "durable.step_id": id,
        "durable.step_kind": kind,
        "durable.attempt": 1,
        "durable.is_reclaim": false,
        "durable.outcome": "completed",
      })),
    );
    // One trace: every span shares the invocation's trace id, and every span ended.
    expect(new Set(spans().map(traceOf))).toEqual(new Set([traceOf(invocation!)]));
    expect(spans()).toHaveLength(5);
    expect(spans().every((s) => s.ended && s.status.code !== SpanStatusCode.ERROR)).toBe(true);

    // The next invocation is a trace of its own, and says it claimed nothing.
    expect((await durable.tick({ budgetMs: 10_000 })).claimed).toBe(0);
    const next = named("durable.invocation")[1]!;
    expect(traceOf(next)).not.toBe(traceOf(invocation!));
    expect(attrs(next)).toMatchObject({ "durable.invocation_kind": "tick", "durable.claimed": 0 });
  });

  it("marks a suspension, and spans no step a replay answers from its receipt", async () => {
    await durable.start(napping, {}, { id: "n1" });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ waiting: 1 });
    const [run] = named("durable.run");
    expect(attrs(run!)["durable.outcome"]).toBe("waiting");
    expect(run!.events.map((e) => [e.name, e.attributes])).toEqual([
      ["suspension", { "durable.waiting_for": "sleep", "durable.waiting_for_name": "nap", "durable.waits": 1 }],
    ]);
    expect(stepsOf(run!).map((s) => [attrs(s)["durable.step_id"], attrs(s)["durable.outcome"]])).toEqual([
      ["before", "completed"],
      ["nap", "suspended"],
    ]);

    exporter.reset();
    await durable.testing.advanceClock("61m");
    expect(await durable.advance("n1")).toBe("completed");
    const [invocation] = named("durable.invocation");
    expect(attrs(invocation!)).toMatchObject({
      "durable.invocation_kind": "advance",
      "durable.claimed": 1,
      "durable.run_id": "n1",
      "durable.outcome": "completed",
    });
    const [replay] = named("durable.run");
    expect(parentOf(replay!)).toBe(idOf(invocation!));
    expect(attrs(replay!)).toMatchObject({ "durable.attempt": 2, "durable.outcome": "completed" });
    // "before" and "nap" answered from their receipts: only "after" executed.
    expect(stepsOf(replay!).map((s) => attrs(s)["durable.step_id"])).toEqual(["after"]);
    expect(new Set(spans().map(traceOf)).size).toBe(1);

    // An advance with nothing due is still an invocation, which claimed nothing.
    exporter.reset();
    expect(await durable.advance("n1")).toBeNull();
    expect(spans().map((s) => [s.name, attrs(s)["durable.claimed"]])).toEqual([["durable.invocation", 0]]);
  });

  it("spans every attempt: a retry with its error, then the attempt that completes or fails", async () => {
    await durable.start(flaky, { failures: 1 }, { id: "f1" });
    await durable.start(flaky, { failures: 5 }, { id: "f2" });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 2, completed: 1, failed: 1 });
    const runs = new Map(named("durable.run").map((r) => [attrs(r)["durable.run_id"], r]));
    const attempts = (runId: string) =>
      stepsOf(runs.get(runId)!).map((s) => [attrs(s)["durable.attempt"], attrs(s)["durable.outcome"], s.status.code]);
    expect(attempts("f1")).toEqual([
      [1, "retry", SpanStatusCode.UNSET],
      [2, "completed", SpanStatusCode.UNSET],
    ]);
    expect(attempts("f2")).toEqual([
      [1, "retry", SpanStatusCode.UNSET],
      [2, "failed", SpanStatusCode.ERROR],
    ]);
    const retried = stepsOf(runs.get("f1")!)[0]!;
    expect(retried.events.map((e) => [e.name, e.attributes?.["exception.message"]])).toEqual([
      ["exception", "attempt 1 failed"],
    ]);
    const failedRun = runs.get("f2")!;
    expect(attrs(failedRun)["durable.outcome"]).toBe("failed");
    expect(failedRun.status.code).toBe(SpanStatusCode.ERROR);
    // Both runs, in one tick, are one trace.
    expect(new Set(spans().map(traceOf)).size).toBe(1);
  });

  it("marks the heal of a run whose lease ran out, and the steps it may re-run as reclaims", async () => {
    await durable.start(stalled, {}, { id: "h1" });
    // A dead owner: claimed with a 2 s lease, then nothing.
    expect((await claimDueRun(db, { workflows: ["stalled"], leaseMs: 2_000 }))?.run.id).toBe("h1");
    await durable.testing.advanceClock("3s");
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ completed: 1, healed: 1 });
    const [run] = named("durable.run");
    expect(attrs(run!)).toMatchObject({ "durable.attempt": 2, "durable.is_reclaim": true });
    expect(run!.events.map((e) => e.name)).toEqual(["heal"]);
    expect(run!.events[0]!.attributes).toMatchObject({ "durable.lost_claims": 1 });
    expect(attrs(named("durable.invocation")[0]!)).toMatchObject({ "durable.healed": 1 });
    // Only the steps reached before the first new receipt are reclaims.
    expect(
      stepsOf(run!).map((s) => [
        attrs(s)["durable.step_id"],
        attrs(s)["durable.attempt"],
        attrs(s)["durable.is_reclaim"],
      ]),
    ).toEqual([
      ["before", 2, true],
      ["charge", 1, false],
      ["after", 1, false],
    ]);
  });

  /** Runs "charge" of `id` in a first tick that stalls past its lease while a second tick heals and completes it. */
  async function race(id: string) {
    const held = gate(`${id}:1`);
    const owner = durable.tick({ budgetMs: 10_000 });
    await until(() => calls.get(`${id}:charge`) === 1);
    // The first owner is stuck inside "charge" past its lease (budget 10 s + margin 1 s).
    await durable.testing.advanceClock("12s");
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
    held.open();
    expect(await owner).toMatchObject({ claimed: 1, completed: 0 });
    const [second, first] = named("durable.invocation"); // the second tick ended first
    const runIn = (invocation: ReadableSpan) => named("durable.run").find((r) => traceOf(r) === traceOf(invocation))!;
    const chargeOf = (run: ReadableSpan) => stepsOf(run).find((s) => attrs(s)["durable.step_id"] === "charge")!;
    return { first: first!, second: second!, lostRun: runIn(first!), healedRun: runIn(second!), chargeOf };
  }

  it("keeps two racing invocations in two traces, and marks the stale owner's rejected write", async () => {
    await durable.start(stalled, {}, { id: "st1" });
    const { first, second, lostRun, healedRun, chargeOf } = await race("st1");
    const invocations = named("durable.invocation");
    expect(invocations).toHaveLength(2);
    expect(traceOf(first)).not.toBe(traceOf(second));
    for (const invocation of invocations) {
      const inTrace = spans().filter((s) => traceOf(s) === traceOf(invocation));
      const runs = inTrace.filter((s) => s.name === "durable.run");
      expect(runs.map(parentOf)).toEqual([idOf(invocation)]);
      for (const step of inTrace.filter((s) => s.name === "durable.step")) expect(parentOf(step)).toBe(idOf(runs[0]!));
    }

    // "charge" completed alone in flight, so its receipt was held back: the next step's flush was
    // refused, in the run's span (once, though the run then ended lost).
    expect(attrs(lostRun)["durable.outcome"]).toBe("lost");
    expect(lostRun.events.map((e) => [e.name, e.attributes])).toEqual([
      ["fence.rejected", { "durable.step_id": "charge", "durable.write": "receipt", "durable.reason": "lease lost" }],
    ]);
    expect(attrs(chargeOf(lostRun))).toMatchObject({ "durable.attempt": 1, "durable.outcome": "completed" });
    expect(stepsOf(lostRun).map((s) => attrs(s)["durable.step_id"])).toEqual(["before", "charge"]);

    expect(eventNames(healedRun)).toEqual(["heal"]);
    expect(attrs(chargeOf(healedRun))).toMatchObject({ "durable.attempt": 2, "durable.is_reclaim": true });
  });

  it("marks a rejected heartbeat on the step's span, and the lost run on the run's", async () => {
    await durable.start(stalled, { beat: true }, { id: "st2" });
    const { lostRun, chargeOf } = await race("st2");
    const charge = chargeOf(lostRun);
    expect(attrs(charge)).toMatchObject({ "durable.attempt": 1, "durable.outcome": "lost" });
    expect(charge.events.map((e) => [e.name, e.attributes])).toEqual([
      ["fence.rejected", { "durable.step_id": "charge", "durable.write": "heartbeat", "durable.reason": "lease lost" }],
    ]);
    expect(attrs(lostRun)["durable.outcome"]).toBe("lost");
    expect(lostRun.events.map((e) => [e.name, e.attributes])).toEqual([
      ["fence.rejected", { "durable.reason": "lease lost" }],
    ]);
  });

  it("marks an outcome conflict on the step that met it, or on the run when its last receipt did", async () => {
    await durable.start(overtaken, { last: false }, { id: "ov1" });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ completed: 1 });
    expect((await durable.status("ov1"))!.output).toBe("recorded first");
    const [run] = named("durable.run");
    const a = stepsOf(run!).find((s) => attrs(s)["durable.step_id"] === "a")!;
    expect(attrs(a)["durable.outcome"]).toBe("completed");
    expect(a.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        "step.outcome-conflict",
        { "durable.step_id": "a", "durable.recorded_status": "completed", "durable.late_status": "completed" },
      ],
    ]);

    exporter.reset();
    await durable.start(overtaken, { last: true }, { id: "ov2" });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, yielded: 1 });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, completed: 1 });
    expect((await durable.status("ov2"))!.output).toBe("recorded first");
    const [held, replay] = named("durable.run");
    expect(attrs(held!)["durable.outcome"]).toBe("yielded");
    expect(held!.events.map((e) => [e.name, e.attributes])).toEqual([
      ["step.outcome-conflict", { "durable.step_id": "a", "durable.late_status": "completed" }],
    ]);
    expect(attrs(replay!)["durable.outcome"]).toBe("completed");
    expect(stepsOf(replay!)).toEqual([]);
  });

  it("works with no SDK registered: nothing is recorded and nothing breaks", async () => {
    await provider!.shutdown();
    provider = null;
    trace.disable();
    context.disable();
    await durable.start(threeSteps, { n: 1 }, { id: "plain" });
    await durable.start(napping, {}, { id: "plain-nap" });
    await durable.start(flaky, { failures: 1 }, { id: "plain-flaky" });
    expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 3, completed: 2, waiting: 1 });
    await durable.testing.advanceClock("61m");
    expect(await durable.advance("plain-nap")).toBe("completed");
    expect(spans()).toEqual([]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it("names the tracer with the toolkit's version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(TRACER_VERSION).toBe(pkg.version);
  });
});
