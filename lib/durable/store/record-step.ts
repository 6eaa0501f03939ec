import { sql } from "kysely";
import { type RowObject, type StepRecord, toStepRecord } from "./rows";
import { type StepOutcome, stepOutcomeJson } from "./step-outcome";
import type { Executor } from "./tables";

export type RecordResult =
  /** `runStatus`: what the run is now ("cancelled", or "running" under a newer owner). */
  | { owned: false; runStatus?: string }
  | { owned: true; conflict: false; notStarted?: ChildNotStarted }
  | { owned: true; conflict: true; recorded: StepRecord };

/**
 * Why a `start` receipt's child could not be inserted (and no receipt was written): its id names
 * a run of another workflow or input, or another run holds its singleton key (`activeRunId`, null
 * when the holder ended before it could be named).
 */
export type ChildNotStarted = { reason: "other_run" } | { reason: "singleton"; activeRunId: string | null };

/**
 * Writes a step receipt under the fence, in one round trip (durable_record_step). First write
 * wins: when the step already has an outcome, that one is returned as `recorded`.
 * `owned: false` means the claim was lost; nothing was written.
 * Pass a transaction to commit the receipt together with a `tx` step's effect.
 * A `start` outcome inserts its child in the same statement, under the same fence check;
 * `notStarted` says why it could not (nothing was written).
 */
export async function recordStep(
  db: Executor,
  runId: string,
  fence: number,
  outcome: StepOutcome,
): Promise<RecordResult> {
  const { rows } = await sql<{ recorded: RowObject }>`
    select durable_record_step(${runId}, ${fence}::bigint, ${stepOutcomeJson(outcome)}::jsonb) as recorded`.execute(db);
  const recorded = rows[0]!.recorded;
  if (!recorded.owned) return { owned: false, runStatus: recorded.runStatus ?? undefined };
  if (recorded.not_started) {
    const { reason, active_run_id } = recorded.not_started;
    const notStarted: ChildNotStarted =
      reason === "singleton" ? { reason, activeRunId: active_run_id ?? null } : { reason: "other_run" };
    return { owned: true, conflict: false, notStarted };
  }
  if (!recorded.conflict) return { owned: true, conflict: false };
  return { owned: true, conflict: true, recorded: toStepRecord(recorded.step) };
}
