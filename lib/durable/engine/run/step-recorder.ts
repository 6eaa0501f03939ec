import {
  type Executor,
  type RecordResult,
  readStepResult,
  recordStep,
  type StepOutcome,
  type StepRecord,
} from "../../store";
import type { StoredError } from "../../types";
import { openStep, sealOutcome } from "../payloads";
import type { Execution } from "./execution";
import { failpoint } from "./failpoints";
import { TRACE_EVENTS, traceEvent } from "./tracing";

/**
 * What every step kind shares: writing its outcome under the fence (and what a refused or failed
 * write means for the execution), held-back receipts, and answering from a receipt. Steps reach
 * it through their host (engine/run/step-host.ts).
 */
export interface StepRecorder {
  /**
   * Writes an outcome. Null: nothing was written and the execution is stopping (lost, cancelled,
   * deadline, database failure); `onRefused` is told when the fence refused it. `tx`: the
   * transaction of a `tx` step, whose receipt commits with its effect.
   */
  write(
    outcome: StepOutcome,
    tx?: Executor,
    onRefused?: () => void,
  ): Promise<Extract<RecordResult, { owned: true }> | null>;
  /** A receipt's answer: its value, or its recorded error thrown again. */
  answer(recorded: StepRecord | undefined): { done: true; value: Promise<any> } | { done: false };
  /** A completed receipt's result, read from the database when the claim left it out (over 64 KiB). */
  resultOf(recorded: StepRecord): Promise<unknown>;
  revive(error: StoredError | null): Error;
  /**
   * Holds back a completed step's receipt instead of writing it now: it is written before the
   * next step starts (so nothing can depend on an unrecorded result) or rides on the run's final
   * write. Only when no other step is in flight. False: not held back; write it now.
   */
  holdBack(outcome: StepOutcome, othersInFlight: boolean): boolean;
  /** Whether a receipt is held back. */
  readonly holding: boolean;
  /** Writes the held-back receipt, if any. False: it could not be (the execution is stopping). */
  flush(): Promise<boolean>;
  /** Takes the held-back receipt for the run's final statement. */
  takeHeld(): StepOutcome | null;
  /** Notes a write of step `stepId` the fence refused (a receipt, a heartbeat) on the active span. */
  noteFenceRejected(stepId: string, write: "receipt" | "heartbeat", reason: string): void;
}

/** A recorded error as the body sees it, the same on the first execution as on every replay. */
export function reviveError(error: StoredError | null): Error {
  const revived = new Error(error?.message ?? "step failed");
  revived.name = error?.name ?? "Error";
  Object.assign(revived, { code: error?.code ?? "error" });
  return revived;
}

export function createStepRecorder(exec: Execution): StepRecorder {
  let held: { outcome: StepOutcome; at: number } | null = null;
  let flushing: Promise<boolean> | null = null;
  // A held-back receipt is written as if its body had just finished: its elapsed time grows by
  // the time it waited, so started_at stays true and completed_at is when it was recorded.
  const release = (): StepOutcome | null => {
    if (!held) return null;
    const { outcome, at } = held;
    held = null;
    return { ...outcome, elapsedMs: (outcome.elapsedMs ?? 0) + (performance.now() - at) };
  };

  const recorder: StepRecorder = {
    write: (outcome, tx, onRefused) => writeOutcome(exec, outcome, tx, onRefused),

    answer(recorded) {
      if (recorded?.status === "completed") return { done: true, value: recorder.resultOf(recorded) };
      if (recorded?.status === "failed") return { done: true, value: Promise.reject(recorder.revive(recorded.error)) };
      return { done: false };
    },

    resultOf(recorded) {
      if (!recorded.resultOmitted) return Promise.resolve(recorded.result);
      return exec.track(async () =>
        exec.settings.codec.open(await readStepResult(exec.db, exec.runId, recorded.stepId)),
      );
    },

    revive: (error) => exec.noteRecordedFailure(reviveError(error)),

    holdBack(outcome, othersInFlight) {
      if (held || othersInFlight || exec.isStopping) return false;
      held = { outcome, at: performance.now() };
      return true;
    },

    // A flush under way counts: a step that starts meanwhile waits for it too, so steps started
    // together keep their call order (their seq) behind the held-back receipt.
    get holding() {
      return held !== null || flushing !== null;
    },

    flush() {
      // Concurrent callers (steps started together) share one write and keep their call order.
      if (flushing) return flushing;
      const outcome = release();
      if (!outcome) return Promise.resolve(true);
      flushing = exec
        .track(() => recorder.write(outcome))
        .then((written) => {
          flushing = null;
          if (written?.conflict) {
            // Another outcome was recorded first, and the body already went on with this one:
            // stop here and let the next execution replay from the recorded outcome.
            exec.requestStop({ kind: "yield", stepId: outcome.stepId });
            return false;
          }
          return Boolean(written);
        });
      return flushing;
    },

    takeHeld: release,

    noteFenceRejected,
  };
  return recorder;
}

/** `write` of a recorder: the outcome under the fence, and what a refused or failed write means. */
async function writeOutcome(
  exec: Execution,
  outcome: StepOutcome,
  tx?: Executor,
  onRefused?: () => void,
): Promise<Extract<RecordResult, { owned: true }> | null> {
  // The chunks of the step's stream are stored before its receipt: a reader never sees a step
  // done before its stream. A step that wrote none has nothing to wait for.
  const ending = exec.streams.end(outcome.stepId);
  if (ending) await ending;
  // Once the claim is known lost (a refused write or heartbeat, a cancel), write nothing more.
  const stop = exec.stopReason?.kind;
  if (stop === "lost" || stop === "abandon") return null;
  // Never write after the deadline: the lease may already belong to the next owner.
  if (exec.remainingMs() <= 0) {
    exec.requestStop({ kind: "abandon", reason: "past the invocation deadline" });
    return null;
  }
  // A process frozen here, past the deadline check, is what only the fence can stop.
  await failpoint("receipt.before-write");
  let result: RecordResult;
  // ctx.setMetadata's patches since the last write ride on this receipt (docs/guide/runs.md,
  // "Tags and metadata"); a write that fails stops the execution, and the next one sets them again.
  // Sealed as it is written (engine/payloads.ts); an outcome recorded first comes back opened.
  const sealed = await sealOutcome(exec.settings.codec, exec.runId, outcome);
  const metadata = exec.metadata.take();
  const sent = metadata ? { ...sealed, metadata: { ...sealed.metadata, ...metadata } } : sealed;
  try {
    result = await recordStep(tx ?? exec.db, exec.runId, exec.fence, sent);
    if (result.owned && result.conflict)
      result = { ...result, recorded: await openStep(exec.settings.codec, result.recorded) };
  } catch (error) {
    // Inside a tx step the caller decides (the transaction rolls back). Outside, the body's
    // outcome is not a failure: stop, and the next owner re-runs the step as a reclaim
    // (docs/rules.md, rule 14).
    if (tx) throw error;
    exec.settings.log(`[${exec.runId}] receipt of step "${outcome.stepId}" could not be written: ${String(error)}`);
    exec.requestStop({ kind: "abandon", reason: "the database failed under a receipt write" });
    return null;
  }
  if (!result.owned) {
    const reason = result.runStatus === "cancelled" ? "cancelled" : "lease lost";
    // On the step's span when a step writes, on the run's when a held-back receipt is flushed.
    noteFenceRejected(outcome.stepId, "receipt", reason);
    exec.requestStop({ kind: "lost", reason });
    onRefused?.();
    return null;
  }
  if (result.conflict) {
    traceEvent(TRACE_EVENTS.outcomeConflict, () => ({
      "durable.step_id": outcome.stepId,
      "durable.recorded_status": result.recorded.status,
      "durable.late_status": outcome.status,
    }));
  }
  // A start whose child could not be inserted wrote no receipt: later steps may still be reclaims
  // (docs/rules.md, rule 7a).
  if (result.conflict || !result.notStarted) exec.noteReceiptWritten();
  return result;
}

/** Notes a write the fence refused on the active span (engine/run/tracing.ts). */
function noteFenceRejected(stepId: string, write: "receipt" | "heartbeat", reason: string): void {
  traceEvent(TRACE_EVENTS.fenceRejected, () => ({
    "durable.step_id": stepId,
    "durable.write": write,
    "durable.reason": reason,
  }));
}
