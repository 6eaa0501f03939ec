// OpenTelemetry spans on the real server (docs/guide/tracing.md, "Tracing"): runs advanced at once by one tick's
// loops, and invocations racing in one process, each stay in their own span tree and trace.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const steps = defineWorkflow({
  name: "steps",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const a = await ctx.step.run("one", async () => {
      await pause(5 + (input.n % 3) * 5);
      return input.n;
    });
    const b = await ctx.step.run("two", async () => {
      await pause(5);
      return a + 1;
    });
    return ctx.step.value("three", () => b + 1);
  },
});

describe("tracing (PostgreSQL, pg)", () => {
  let db: Kysely<any>;
  let durable: Durable;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  beforeAll(async () => {
    db = await connect(await createTestDatabase("durable_tracing_pg"), { driver: "pg" });
    durable = createDurable({
      db,
      workflows: [steps],
      secrets: { durable: "test-secret" },
      defaults: { lease: "2s" },
      log: () => {},
    });
    await durable.migrate();
    await resetDurableTables(db);
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });

  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    await db?.destroy();
  });

  const idOf = (span: ReadableSpan) => span.spanContext().spanId;
  const traceOf = (span: ReadableSpan) => span.spanContext().traceId;
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  /** Every run span's parent is an invocation span of its trace, every step span's its run's, of the same run. */
  function expectTrees(spans: ReadableSpan[]) {
    const byId = new Map(spans.map((s) => [idOf(s), s]));
    for (const span of spans) {
      if (span.name === "durable.invocation") continue;
      const parent = byId.get(parentOf(span) ?? "")!;
      expect(parent?.name).toBe(span.name === "durable.run" ? "durable.invocation" : "durable.run");
      expect(traceOf(parent)).toBe(traceOf(span));
      if (span.name === "durable.step") {
        expect(span.attributes["durable.run_id"]).toBe(parent.attributes["durable.run_id"]);
      }
    }
  }

  it("nests runs advanced at once by one tick's loops under that tick, each with its own steps", async () => {
    exporter.reset();
    for (let n = 0; n < 8; n++) await durable.start(steps, { n }, { id: `c${n}` });
    expect(await durable.tick({ budgetMs: 10_000, concurrency: 4 })).toMatchObject({ claimed: 8, completed: 8 });
    const spans = exporter.getFinishedSpans();
    expect(spans.filter((s) => s.name === "durable.invocation")).toHaveLength(1);
    expect(spans.filter((s) => s.name === "durable.run")).toHaveLength(8);
    expect(spans.filter((s) => s.name === "durable.step")).toHaveLength(24);
    expect(new Set(spans.map(traceOf)).size).toBe(1);
    expectTrees(spans);
  });

  it("keeps advances racing in one process in a trace each", async () => {
    exporter.reset();
    for (let n = 0; n < 6; n++) await durable.start(steps, { n }, { id: `a${n}` });
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, n) => durable.advance(`a${n}`)));
    expect(outcomes).toEqual(Array(6).fill("completed"));
    const spans = exporter.getFinishedSpans();
    const invocations = spans.filter((s) => s.name === "durable.invocation");
    expect(invocations).toHaveLength(6);
    expect(new Set(spans.map(traceOf)).size).toBe(6);
    for (const invocation of invocations) {
      const runId = invocation.attributes["durable.run_id"];
      const inTrace = spans.filter((s) => traceOf(s) === traceOf(invocation));
      expect(inTrace).toHaveLength(5);
      expect(inTrace.every((s) => s === invocation || s.attributes["durable.run_id"] === runId)).toBe(true);
    }
    expectTrees(spans);
  });
});
