import {
  type Attributes,
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { ClaimedRun } from "../../store";
import type { Execution } from "./execution";
import type { StepSpanEnd, StepSpanInfo, StepSpanOutcome, Stop } from "./step-host";

export type { StepSpanEnd, StepSpanInfo, StepSpanOutcome };

// OpenTelemetry spans and events of the engine (docs/guide/tracing.md, "Tracing"), through `@opentelemetry/api`
// only: with no SDK registered its tracer is a no-op, and every span here is non-recording, so
// nothing beyond a few small objects is built. Spans nest through the active context: an SDK with
// a context manager (`@vercel/otel`, NodeSDK) makes one trace of an invocation, its runs and their
// steps.

export const TRACER_NAME = "durable-next";
/** The toolkit's version (package.json, checked by tests/pglite/tracing.test.ts). */
export const TRACER_VERSION = "0.2.0";

export const SPAN_INVOCATION = "durable.invocation";
export const SPAN_RUN = "durable.run";
export const SPAN_STEP = "durable.step";

/** The span events; `heal`, `fence.rejected` and `step.outcome-conflict` are named as in `durable_events`. */
export const TRACE_EVENTS = {
  /** The claim of a `durable.run` healed the run: the previous owner's lease had run out. */
  heal: "heal",
  /** The run parked: it waits for a wake time, a signal, a poll or a retry delay. */
  suspension: "suspension",
  /** A write under this claim's fence was refused: another owner holds the run, or it was cancelled. */
  fenceRejected: "fence.rejected",
  /** A step's receipt met another outcome recorded first: the recorded one stands. */
  outcomeConflict: "step.outcome-conflict",
} as const;

/**
 * The tracer, asked for each span: a provider registered (or replaced) after this module loaded is
 * used from its next span on, and a cached tracer would keep delegating to a disabled one.
 */
const tracer = (): Tracer => trace.getTracer(TRACER_NAME, TRACER_VERSION);

/** What the global provider delegates to while no SDK is registered: the API's own no-op. */
const NO_SDK = new ProxyTracerProvider().getDelegate();

/** The span of a run while no SDK is registered: it records nothing, so one serves every run. */
const SILENT_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Whether an SDK is registered, asked at each span as the tracer is. Without one every span would
 * be a no-op, so the spans are skipped outright: no attributes built, no context entered, on the
 * hot path of every run and step.
 */
function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_SDK;
}

/** Marks a span as failed with `error`. */
function recordError(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}

// Spans that already have a `fence.rejected` event: a run's span says it once, with the step whose
// write was refused when a held-back receipt's was, rather than again at the run's "lost" end.
const rejectedSpans = new WeakSet<Span>();

/** Adds an event to `span`, if it records: the attributes are built only then. */
export function spanEvent(span: Span, name: string, attributes: () => Attributes): void {
  if (!span.isRecording()) return;
  if (name === TRACE_EVENTS.fenceRejected) {
    if (rejectedSpans.has(span)) return;
    rejectedSpans.add(span);
  }
  span.addEvent(name, attributes());
}

/** Adds an event to the active span (a step's, or the run's outside any step), if it records. */
export function traceEvent(name: string, attributes: () => Attributes): void {
  const span = trace.getActiveSpan();
  if (span) spanEvent(span, name, attributes);
}

// What an invocation's result says, set on its span at the end: a tick's report counts, or the
// run an advance claimed (null: none was due).
const TICK_COUNTS: Record<string, string> = {
  claimed: "durable.claimed",
  completed: "durable.completed",
  waiting: "durable.waiting",
  failed: "durable.failed",
  yielded: "durable.yielded",
  healed: "durable.healed",
  scheduled: "durable.scheduled",
  fannedOut: "durable.fanned_out",
  compacted: "durable.compacted",
};

function noteInvocationResult(span: Span, result: unknown): void {
  if (result === null || result === undefined) {
    span.setAttribute("durable.claimed", 0);
    return;
  }
  if (typeof result !== "object") return;
  const fields = result as Record<string, unknown>;
  if (typeof fields.claimed === "number") {
    for (const [key, name] of Object.entries(TICK_COUNTS)) {
      const value = fields[key];
      if (typeof value === "number") span.setAttribute(name, value);
    }
  } else if (typeof fields.outcome === "string") {
    span.setAttribute("durable.claimed", 1);
    span.setAttribute("durable.outcome", fields.outcome);
    const runId = (fields.claim as ClaimedRun | undefined)?.run?.id;
    if (typeof runId === "string") span.setAttribute("durable.run_id", runId);
  }
}

/**
 * Runs one invocation (`tick`, `advance`, a worker's claim) inside a `durable.invocation` span,
 * the root of the invocation's trace (or a child of the request's span when the platform traces
 * requests). Attributes: `durable.invocation_kind`; at the end a tick's counts (`durable.claimed`,
 * `durable.completed`, …, `durable.fanned_out`) or an advance's `durable.claimed`, `durable.run_id`,
 * `durable.outcome`. A thrown error is recorded, with the error status.
 */
export function withInvocationSpan<T>(kind: "tick" | "advance" | "work", fn: () => Promise<T>): Promise<T> {
  if (!tracing()) return fn();
  return tracer().startActiveSpan(
    SPAN_INVOCATION,
    { attributes: { "durable.invocation_kind": kind } },
    async (span): Promise<T> => {
      try {
        const result = await fn();
        if (span.isRecording()) noteInvocationResult(span, result);
        return result;
      } catch (error) {
        recordError(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Runs one claimed run's advance inside a `durable.run` span: `durable.run_id`, `durable.workflow`,
 * `durable.attempt` (the run's claims so far, this one included), `durable.is_reclaim` (an earlier
 * claim was lost and no receipt written since: its steps may have run), and `durable.outcome` at
 * the end; a `heal` event when this claim healed the run. A failed run sets the span's status to
 * error. `fn` adds the events only it knows of (suspension, fence rejection, outcome conflict).
 */
export function withRunSpan<O extends string>(claim: ClaimedRun, fn: (span: Span) => Promise<O>): Promise<O> {
  if (!tracing()) return fn(SILENT_SPAN);
  const { run } = claim;
  const attributes: Attributes = {
    "durable.run_id": run.id,
    "durable.workflow": run.workflow,
    "durable.attempt": run.attempts,
    "durable.is_reclaim": run.lostClaims > 0,
  };
  return tracer().startActiveSpan(SPAN_RUN, { attributes }, async (span): Promise<O> => {
    if (claim.healed) {
      spanEvent(span, TRACE_EVENTS.heal, () => ({
        "durable.lost_claims": run.lostClaims,
        ...(run.lostLeaseUntil ? { "durable.lost_lease_until": run.lostLeaseUntil.toISOString() } : {}),
      }));
    }
    try {
      const outcome = await fn(span);
      if (span.isRecording()) {
        span.setAttribute("durable.outcome", outcome);
        if (outcome === "failed") span.setStatus({ code: SpanStatusCode.ERROR, message: "the run failed" });
      }
      return outcome;
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

const STOP_OUTCOMES: Record<Stop["kind"], StepSpanOutcome> = {
  suspend: "suspended",
  yield: "yielded",
  continue: "stopped",
  fail: "stopped",
  lost: "lost",
  abandon: "abandoned",
};

/** The outcome of a step whose work was cut short by the execution's stop (null: not stopping). */
export function stopOutcome(stop: Stop | null): StepSpanOutcome {
  return stop ? STOP_OUTCOMES[stop.kind] : "stopped";
}

/**
 * Runs one executed attempt of a step inside a `durable.step` span, a child of the run's span, and
 * the active span while `fn` runs (so a step body's own spans, a fetch's, nest under it):
 * `durable.run_id`, `durable.step_id`, `durable.step_kind`, `durable.attempt`, `durable.is_reclaim`,
 * and `durable.outcome` at the end. The span ends when `fn` settles (`end` names the outcome, or
 * null: the execution's stop cut the attempt short; a rejection is "failed"), or when the
 * execution stops first: a step that suspends or loses the claim returns a promise that never
 * settles (docs/rules.md, rule 11b).
 */
export function withStepSpan<T>(
  exec: Execution,
  step: StepSpanInfo,
  fn: () => Promise<T>,
  end: (value: T) => StepSpanEnd | null,
): Promise<T> {
  if (!tracing()) return fn();
  const attributes: Attributes = {
    "durable.run_id": exec.runId,
    "durable.step_id": step.stepId,
    "durable.step_kind": step.kind,
    "durable.attempt": step.attempt,
    "durable.is_reclaim": step.isReclaim,
  };
  return tracer().startActiveSpan(SPAN_STEP, { attributes }, (span): Promise<T> => {
    // Without an SDK (or sampled out) there is nothing to end: run the step as it is.
    if (!span.isRecording()) return fn();
    let ended = false;
    const finish = ({ outcome, error }: StepSpanEnd) => {
      if (ended) return;
      ended = true;
      span.setAttribute("durable.outcome", outcome);
      if (error !== undefined) {
        if (outcome === "failed") recordError(span, error);
        else span.recordException(error instanceof Error ? error : new Error(String(error)));
      }
      span.end();
    };
    void exec.stopped.then((stop) => finish({ outcome: stopOutcome(stop) }));
    let attempt: Promise<T>;
    try {
      attempt = fn();
    } catch (error) {
      attempt = Promise.reject(error);
    }
    return attempt.then(
      (value) => {
        finish(end(value) ?? { outcome: stopOutcome(exec.stopReason) });
        return value;
      },
      (error: unknown) => {
        finish({ outcome: "failed", error });
        throw error;
      },
    );
  });
}
