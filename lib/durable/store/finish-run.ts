import { sql } from "kysely";
import type { StoredError } from "../types";
import { type StepOutcome, stepOutcomeJson } from "./step-outcome";
import type { DurableDb } from "./tables";

export type RunEnd = { status: "completed"; outputJson: string } | { status: "failed"; error: StoredError };

/**
 * Ends the run the owner holds (durable_finish_run), writing the body's held-back last receipt in
 * the same statement. "lost": the claim was lost and nothing was written; "conflict": that step
 * already had another outcome, nothing ended and the run must replay.
 */
export async function finishRun(
  db: DurableDb,
  runId: string,
  fence: number,
  end: RunEnd,
  warnings: string[] = [],
  lastReceipt: StepOutcome | null = null,
): Promise<"finished" | "lost" | "conflict"> {
  const output = end.status === "completed" ? end.outputJson : null;
  const error = end.status === "failed" ? JSON.stringify(end.error) : null;
  const step = lastReceipt ? stepOutcomeJson(lastReceipt) : null;
  const { rows } = await sql<{ finished: "finished" | "lost" | "conflict" }>`
    select durable_finish_run(${runId}, ${fence}::bigint, ${end.status}, ${output}::jsonb,
                              ${error}::jsonb, ${JSON.stringify(warnings)}::jsonb, ${step}::jsonb) as finished`.execute(
    db,
  );
  return rows[0]!.finished;
}
