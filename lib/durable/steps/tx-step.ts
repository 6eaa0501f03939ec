// The body of a `tx` step: the user's statements, the receipt and its fence check in one
// transaction (docs/rules.md, rule 14); effect-steps.ts runs it under the effect-step rules.
import type { Transaction } from "kysely";
import type { Execution } from "../engine/execution";
import { failpoint } from "../engine/failpoints";
import type { StepRecorder } from "../engine/step-recorder";
import { InvalidInputError, ResultTooLargeError } from "../errors";
import { insertEvent } from "../store";
import type { StepInfo } from "../types";
import { type Body, type BodyResult, Rollback } from "./effect-body";

/** The body of `tx` step `id`: `fn` inside a transaction that commits its receipt too. */
export function txBody<T>(
  exec: Execution,
  recorder: StepRecorder,
  id: string,
  fn: (tx: Transaction<any>, s: StepInfo) => Promise<T>,
): Body {
  return async (s, seq) => {
    const started = performance.now();
    let result!: BodyResult;
    let bodyReturned = false;
    // One transaction: the body's statements, the receipt and its fence check commit together.
    await exec.db
      .transaction()
      .execute(async (trx) => {
        const value = await fn(trx, s);
        bodyReturned = true;
        await failpoint("tx.after-effect");
        const json = recorder.json(value, id);
        let refused = false;
        const receipt = await recorder.write(
          {
            stepId: id,
            seq,
            kind: "tx",
            status: "completed",
            attempt: s.attempt,
            externalKey: s.externalKey,
            resultJson: json,
            elapsedMs: performance.now() - started,
          },
          trx,
          () => {
            refused = true;
          },
        );
        // Lost fence, or a first write already recorded: roll the effect back.
        if (!receipt || receipt.conflict) throw new Rollback(receipt, refused);
        await failpoint("tx.after-receipt");
        result = { json, receipt };
      })
      .catch(async (error) => {
        await settleFailedTransaction(exec, id, error, bodyReturned);
        throw error;
      });
    return result;
  };
}

/** After a `tx` transaction that did not commit: note a rollback, or stop when the commit failed. */
async function settleFailedTransaction(exec: Execution, id: string, error: unknown, bodyReturned: boolean) {
  // The receipt's statement noted the refusal or the conflict inside the transaction,
  // which rolled back with it: note it again, now, on its own.
  if (error instanceof Rollback) await noteRolledBack(exec, id, error);
  // The body succeeded but its receipt or the commit failed under it: not a step
  // failure (rule 14). Stop; the next owner finds no receipt and re-runs it as a reclaim.
  if (bodyReturned && !(error instanceof Rollback) && !ResultTooLargeError.is(error) && !InvalidInputError.is(error)) {
    exec.settings.log(`[${exec.runId}] tx step "${id}" could not commit its receipt: ${String(error)}`);
    exec.requestStop({ kind: "abandon", reason: "the database failed under a tx receipt" });
  }
}

/** The event a rolled-back `tx` receipt's statement wrote, written again after the rollback. */
async function noteRolledBack(exec: Execution, id: string, rollback: Rollback): Promise<void> {
  const result = rollback.result;
  const event =
    result?.owned && result.conflict
      ? { kind: "step.outcome-conflict", data: { recorded: result.recorded.status, late: "completed" } }
      : rollback.refused
        ? { kind: "fence.rejected", data: { write: "tx", late: "completed" } }
        : null;
  if (!event) return;
  try {
    await insertEvent(exec.db, { runId: exec.runId, stepId: id, fence: exec.fence, ...event });
  } catch (error) {
    exec.settings.log(`[${exec.runId}] could not note ${event.kind} of tx step "${id}": ${String(error)}`);
  }
}
