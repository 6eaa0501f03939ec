import { sql } from "kysely";
import type { StoredError } from "../types";
import { endParameters } from "./finish-run";
import type { StepOutcome } from "./step-outcome";
import type { DurableDb } from "./tables";

/** The successor of `ctx.continueAsNew` as the engine prepared it; what carries over the SQL reads from the run. */
export interface SuccessorToInsert {
  id: string;
  workflow: string;
  inputJson: string;
  version: string | null;
  /** Milliseconds from the successor's start to its deadline (the workflow's own; null: none). */
  deadlineInMs: number | null;
}

/** "taken": a run already had the successor's id, and the run was failed with `takenError` instead. */
export type ContinueResult = "continued" | "lost" | "conflict" | "taken";

/**
 * Ends the run the owner holds as completed with `continued_as`, and inserts its successor, in one
 * statement under the fence (durable_continue_run; docs/sql.md), with the held-back last receipt
 * and the metadata patches riding on it as on finishRun.
 */
export async function continueRun(
  db: DurableDb,
  runId: string,
  fence: number,
  successor: SuccessorToInsert,
  takenError: StoredError,
  warnings: string[] = [],
  lastReceipt: StepOutcome | null = null,
  metadata: Record<string, unknown> | null = null,
): Promise<ContinueResult> {
  const e = endParameters({ status: "completed", outputJson: "null" }, warnings, lastReceipt, metadata);
  const next = {
    id: successor.id,
    workflow: successor.workflow,
    version: successor.version,
    deadline_in_ms: successor.deadlineInMs === null ? null : Math.ceil(successor.deadlineInMs),
  };
  // The input is spliced in as the JSON text it became (the same text a start's insert writes).
  const nextJson = `${JSON.stringify(next).slice(0, -1)},"input":${successor.inputJson}}`;
  const { rows } = await sql<{ continued: ContinueResult }>`
    select durable_continue_run(${runId}, ${fence}::bigint, ${nextJson}::jsonb, ${JSON.stringify(takenError)}::jsonb,
                                ${e.warnings}::jsonb, ${e.step}::jsonb) as continued`.execute(db);
  return rows[0]!.continued;
}
