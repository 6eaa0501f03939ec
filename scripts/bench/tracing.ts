// The cost of tracing per step (docs/guide/tracing.md, "Tracing"): the same drain of 3-step runs with no
// OpenTelemetry SDK registered (the API's no-op tracer) and with one registered (a
// BasicTracerProvider, a BatchSpanProcessor into an exporter that only counts, and the
// AsyncLocalStorage context manager that @vercel/otel and NodeSDK register), in turns, in this one
// process. Two more figures split the cost: the context manager alone (AsyncLocalStorage makes
// every promise dearer on Node 20; Next.js's own request storage already turns it on), and the
// spans alone, with no database.
import { context, type Span, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { Execution } from "../../lib/durable/engine/run/execution";
import { withInvocationSpan, withRunSpan, withStepSpan } from "../../lib/durable/engine/run/tracing";
import type { ClaimedRun } from "../../lib/durable/store";
import { percentile } from "./report";
import { type Drain, drainOnPGlite, drainOnServer, STEPS_PER_RUN } from "./throughput";

export const TRACING_RUNS = 500;
export const TRACING_ROUNDS = 5;
const SPAN_ONLY_RUNS = 20_000;

/** An exporter that drops what it is given and counts it (0 is ExportResultCode.SUCCESS). */
class CountingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** No SDK; the AsyncLocalStorage context manager alone (no tracer provider); both (an SDK). */
const MODES = ["none", "context", "sdk"] as const;
type Mode = (typeof MODES)[number];

/** Runs `work` under `mode`; answers what it returned and the spans exported. */
async function under<T>(mode: Mode, work: () => Promise<T>): Promise<{ value: T; spans: number }> {
  if (mode === "none") return { value: await work(), spans: 0 };
  const exporter = new CountingExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  if (mode === "sdk") trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    const value = await work();
    await provider.forceFlush();
    return { value, spans: exporter.spans };
  } finally {
    await provider.shutdown();
    trace.disable();
    context.disable();
  }
}

export interface TracingSample {
  /** Wall µs per step of the drain. */
  wall: number;
  /** CPU µs per step of this process (on PGlite it includes the database). */
  cpu: number;
}

export interface TracingRow {
  label: string;
  steps: number;
  none: TracingSample;
  context: TracingSample;
  sdk: TracingSample;
  /** Spans exported per run with the SDK registered. */
  spansPerRun: number;
}

export interface TracingCost {
  rows: TracingRow[];
  runs: number;
  rounds: number;
  spanOnlyRuns: number;
  /** The spans-alone loop without the tracing calls. */
  bare: TracingSample;
}

const median = (values: number[]) => percentile(values, 50);

/** The median of each mode's samples. */
const medians = (samples: Record<Mode, TracingSample[]>) => {
  const pick = (mode: Mode): TracingSample => ({
    wall: median(samples[mode].map((s) => s.wall)),
    cpu: median(samples[mode].map((s) => s.cpu)),
  });
  return { none: pick("none"), context: pick("context"), sdk: pick("sdk") };
};

/** `rounds` drains in each mode, the order turning each round (so drift hits them alike); the medians. */
async function compare(label: string, drain: () => Promise<Drain>, runs: number, rounds: number): Promise<TracingRow> {
  const samples: Record<Mode, TracingSample[]> = { none: [], context: [], sdk: [] };
  let spans = 0;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < MODES.length; i++) {
      const mode = MODES[(round + i) % MODES.length]!;
      const { value: d, spans: exported } = await under(mode, drain);
      samples[mode].push({ wall: (d.seconds * 1e6) / d.steps, cpu: (d.cpu.node * 1000) / d.steps });
      if (mode === "sdk") spans = exported;
    }
  }
  return { label, steps: runs * STEPS_PER_RUN, ...medians(samples), spansPerRun: spans / runs };
}

/**
 * The engine's spans alone: per run, an invocation span around a run span around 3 step spans, as a
 * drain makes them, with no database and no step work (a fake claim and execution).
 */
const TRACED = { invocation: withInvocationSpan, run: withRunSpan, step: withStepSpan };
/** The same calls without the tracing: what the loop costs by itself. */
const BARE: typeof TRACED = {
  invocation: (_kind, fn) => fn(),
  run: (_claim, fn) => fn(undefined as unknown as Span),
  step: (_exec, _step, fn) => fn(),
};

async function spansOnly(runs: number, wrap = TRACED): Promise<TracingSample> {
  const claim = {
    run: { id: "bench", workflow: "bench", attempts: 1, lostClaims: 0, lostLeaseUntil: null },
    healed: false,
  } as unknown as ClaimedRun;
  const kinds = ["run", "tx", "value"] as const;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) {
    const exec = { runId: "bench", stopped: new Promise(() => {}), stopReason: null } as unknown as Execution;
    await wrap.invocation("tick", () =>
      wrap.run(claim, async () => {
        for (const kind of kinds) {
          await wrap.step(
            exec,
            { stepId: kind, kind, attempt: 1, isReclaim: false },
            async () => 1,
            () => ({ outcome: "completed" }),
          );
        }
        return "completed";
      }),
    );
  }
  const used = process.cpuUsage(cpu0);
  const steps = runs * STEPS_PER_RUN;
  return { cpu: (used.user + used.system) / steps, wall: ((performance.now() - t0) * 1000) / steps };
}

/** The figures: the drain on PostgreSQL and on PGlite, each mode `rounds` times, and the spans alone. */
export async function tracingCost(runs = TRACING_RUNS, rounds = TRACING_ROUNDS): Promise<TracingCost> {
  // untimed: JIT-compiles the engine, the drivers and the SDK before the first measured drain
  for (const mode of MODES) await under(mode, () => drainOnServer(100, 1));
  const rows = [
    await compare("PostgreSQL (pg), 1 tick loop", () => drainOnServer(runs, 1), runs, rounds),
    await compare("PGlite, 1 tick loop", () => drainOnPGlite(runs), runs, rounds),
  ];
  const alone: Record<Mode, TracingSample[]> = { none: [], context: [], sdk: [] };
  const bare: TracingSample[] = [];
  for (let round = 0; round < rounds; round++) {
    bare.push(await spansOnly(SPAN_ONLY_RUNS, BARE));
    for (const mode of MODES) alone[mode].push((await under(mode, () => spansOnly(SPAN_ONLY_RUNS))).value);
  }
  rows.push({
    label: `the spans alone (no database, no step work; ${SPAN_ONLY_RUNS.toLocaleString("en-US")} runs)`,
    steps: SPAN_ONLY_RUNS * STEPS_PER_RUN,
    ...medians(alone),
    spansPerRun: 5,
  });
  return {
    rows,
    runs,
    rounds,
    spanOnlyRuns: SPAN_ONLY_RUNS,
    bare: { wall: median(bare.map((s) => s.wall)), cpu: median(bare.map((s) => s.cpu)) },
  };
}

/** The section's table and notes, under `heading` (bench.ts's, with the load average). */
export async function tracingSection(heading: (text: string) => void, table: (rows: string[][]) => void) {
  const t = await tracingCost();
  heading(
    `6. Tracing cost per step: ${t.runs} runs × ${STEPS_PER_RUN} steps (run, tx with one insert, value) drained ` +
      `with no OpenTelemetry SDK,\n   with the AsyncLocalStorage context manager alone, and with an SDK registered ` +
      `(BasicTracerProvider, BatchSpanProcessor into a\n   counting exporter, the same context manager); ` +
      `median of ${t.rounds} drains each, in turns`,
  );
  const us = (v: number) => `${v.toFixed(1)} µs`;
  const spansAlone = t.rows.at(-1)!;
  const signed = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)} µs`;
  table([
    [
      "µs per step",
      "CPU no SDK",
      "CPU ctx only",
      "CPU SDK",
      "SDK cost",
      "of it spans",
      "wall no SDK",
      "wall SDK",
      "SDK cost",
      "spans/run",
    ],
    ...t.rows.map((r) => [
      r.label,
      us(r.none.cpu),
      us(r.context.cpu),
      us(r.sdk.cpu),
      signed(r.sdk.cpu - r.none.cpu),
      signed(r.sdk.cpu - r.context.cpu),
      us(r.none.wall),
      us(r.sdk.wall),
      signed(r.sdk.wall - r.none.wall),
      r.spansPerRun.toFixed(2),
    ]),
  ]);
  console.log(
    `
  CPU: this process's CPU per step (on PGlite it includes the database); wall: the drain's time per step. SDK cost: SDK
  minus no SDK; of it spans: SDK minus the context manager alone, the rest being AsyncLocalStorage's cost on every
  promise, which a Next.js server already pays for its own request storage. spans/run: exported with the SDK (a run
  span, its step spans, the tick's invocation spans shared among the runs it claimed). With no SDK the API's tracer is
  a no-op: the spans are non-recording and nothing is exported. The spans-alone loop without the tracing calls takes
  ${us(t.bare.cpu)} CPU per step: the no-op tracer costs ${signed(spansAlone.none.cpu - t.bare.cpu)} a step, ` +
      `an SDK's spans ${signed(spansAlone.sdk.cpu - t.bare.cpu)} (context manager included).`,
  );
}
