import { sql, type Kysely, type Transaction } from "kysely";
import { toStepRecord, type StepKind, type StepRecord, type StoredError } from "./rows";

/** One step outcome as the owner writes it. `resultJson` is JSON text (see json.ts). */
export interface StepOutcome {
  stepId: string;
  seq: number;
  kind: StepKind;
  status: "completed" | "failed" | "waiting";
  attempt: number;
  resultJson?: string;
  error?: StoredError;
  externalKey?: string;
  /** How long the body ran, by the app's monotonic clock; started_at = durable_now() − elapsed. */
  elapsedMs?: number;
  wakeAt?: Date;
  /** Wake this long after the database clock at the write (a retry's due time). */
  wakeInMs?: number;
  deadlineAt?: Date;
  /** A new wait's deadline, this long after the database clock at the write (never moves after). */
  deadlineInMs?: number;
  /** Polls made so far (waitFor). */
  polls?: number;
}

export type RecordResult =
  /** `runStatus`: what the run is now ("cancelled", or "running" under a newer owner). */
  | { owned: false; runStatus?: string }
  | { owned: true; conflict: false }
  | { owned: true; conflict: true; recorded: StepRecord };

/**
 * Writes a step receipt under the fence, in one round trip (durable_record_step). First write
 * wins: when the step already has an outcome, that one is returned as `recorded`.
 * `owned: false` means the claim was lost; nothing was written.
 * Pass a transaction to commit the receipt together with a `tx` step's effect.
 */
export async function recordStep(
  db: Kysely<any> | Transaction<any>,
  runId: string,
  fence: number,
  outcome: StepOutcome,
): Promise<RecordResult> {
  const { rows } = await sql<{ recorded: Record<string, any> }>`
    select durable_record_step(${runId}, ${fence}::bigint, ${stepJson(outcome)}::jsonb) as recorded`.execute(db);
  const recorded = rows[0]!.recorded;
  if (!recorded.owned) return { owned: false, runStatus: recorded.runStatus ?? undefined };
  if (!recorded.conflict) return { owned: true, conflict: false };
  return { owned: true, conflict: true, recorded: toStepRecord(recorded.step) };
}

/** An outcome as the SQL functions take it; the result is spliced in as raw JSON text so it is stored exactly as the body saw it. */
function stepJson(outcome: StepOutcome): string {
  const step = {
    step_id: outcome.stepId,
    seq: outcome.seq,
    kind: outcome.kind,
    status: outcome.status,
    attempt: outcome.attempt,
    error: outcome.error ?? null,
    external_key: outcome.externalKey ?? null,
    elapsed_ms: Math.max(0, Math.round(outcome.elapsedMs ?? 0)),
    wake_at: outcome.wakeAt?.toISOString() ?? null,
    wake_in_ms: outcome.wakeInMs === undefined ? null : Math.round(outcome.wakeInMs),
    deadline_at: outcome.deadlineAt?.toISOString() ?? null,
    deadline_in_ms: outcome.deadlineInMs === undefined ? null : Math.round(outcome.deadlineInMs),
    polls: outcome.polls ?? null,
  };
  return JSON.stringify(step).slice(0, -1) + `,"result":${outcome.resultJson ?? "null"}}`;
}

/**
 * Ends the run the owner holds, writing the body's held-back last receipt in the same statement.
 * "lost": the claim was lost and nothing was written; "conflict": that step already had another
 * outcome, nothing ended and the run must replay.
 */
export async function finishRun(
  db: Kysely<any>,
  runId: string,
  fence: number,
  end: { status: "completed"; outputJson: string } | { status: "failed"; error: StoredError },
  warnings: string[] = [],
  lastReceipt: StepOutcome | null = null,
): Promise<"finished" | "lost" | "conflict"> {
  const output = end.status === "completed" ? end.outputJson : null;
  const error = end.status === "failed" ? JSON.stringify(end.error) : null;
  const step = lastReceipt ? stepJson(lastReceipt) : null;
  const { rows } = await sql<{ finished: "finished" | "lost" | "conflict" }>`
    select durable_finish_run(${runId}, ${fence}::bigint, ${end.status}, ${output}::jsonb,
                              ${error}::jsonb, ${JSON.stringify(warnings)}::jsonb, ${step}::jsonb) as finished`.execute(db);
  return rows[0]!.finished;
}

/** Gives the run back, due now (the budget cannot fit the next step). False: claim was lost. */
export async function releaseRun(db: Kysely<any>, runId: string, fence: number, stepId: string | null): Promise<boolean> {
  const { rows } = await sql<{ released: boolean }>`
    select durable_release_run(${runId}, ${fence}::bigint, ${stepId}) as released`.execute(db);
  return rows[0]!.released;
}
