import type { Transaction } from "kysely";
import type { Execution } from "./execution";
import { failpoint } from "./failpoints";
import { toJsonText } from "./json";
import { recordStep, type RecordResult, type StepOutcome } from "./ledger";
import type { StepRecord, StoredError } from "./rows";

/**
 * What every step kind shares: writing its outcome under the fence (and what a refused or failed
 * write means for the execution), answering from a receipt, and the JSON round trip.
 */
export interface StepRecorder {
  /** Writes an outcome. Null: nothing was written and the execution is stopping (lost, cancelled, deadline, database failure). */
  write(outcome: StepOutcome, tx?: Transaction<any>): Promise<Extract<RecordResult, { owned: true }> | null>;
  /** A receipt's answer: its value, or its recorded error thrown again. */
  answer(recorded: StepRecord | undefined): { done: true; value: Promise<any> } | { done: false };
  /** The stored JSON text of a value (size limit, jsonb-safe). */
  json(value: unknown, stepId: string): string;
  revive(error: StoredError | null): Error;
}

/** A recorded error as the body sees it, the same on the first execution as on every replay. */
export function reviveError(error: StoredError | null): Error {
  const revived = new Error(error?.message ?? "step failed");
  revived.name = error?.name ?? "Error";
  Object.assign(revived, { code: error?.code ?? "error" });
  return revived;
}

export function createStepRecorder(exec: Execution): StepRecorder {
  const { settings } = exec;
  return {
    async write(outcome, tx) {
      // Never write after the deadline: the lease may already belong to the next owner.
      if (exec.remainingMs() <= 0) {
        exec.requestStop({ kind: "abandon", reason: "past the invocation deadline" });
        return null;
      }
      // A process frozen here, past the deadline check, is what only the fence can stop.
      await failpoint("receipt.before-write");
      let result: RecordResult;
      try {
        result = await recordStep(tx ?? exec.db, exec.runId, exec.fence, outcome);
      } catch (error) {
        // Inside a tx step the caller decides (the transaction rolls back). Outside, the body's
        // outcome is not a failure: stop, and the next owner re-runs the step as a reclaim (rule 14).
        if (tx) throw error;
        settings.log(`[${exec.runId}] receipt of step "${outcome.stepId}" could not be written: ${String(error)}`);
        exec.requestStop({ kind: "abandon", reason: "the database failed under a receipt write" });
        return null;
      }
      if (!result.owned) {
        exec.requestStop({ kind: "lost", reason: result.runStatus === "cancelled" ? "cancelled" : "lease lost" });
        return null;
      }
      exec.noteReceiptWritten();
      return result;
    },

    answer(recorded) {
      if (recorded?.status === "completed") return { done: true, value: Promise.resolve(recorded.result) };
      if (recorded?.status === "failed") return { done: true, value: Promise.reject(reviveError(recorded.error)) };
      return { done: false };
    },

    json: (value, stepId) => toJsonText(value, { limit: settings.maxResultBytes, stepId }),
    revive: reviveError,
  };
}
