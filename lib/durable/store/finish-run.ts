import { sql } from "kysely";
import type { StoredError } from "../types";
import { type ClaimedRun, type ClaimRequest, claimParameters, toClaimAnswer } from "./claim-run";
import type { RowObject } from "./rows";
import { type StepOutcome, stepOutcomeJson } from "./step-outcome";
import type { DurableDb } from "./tables";

export type RunEnd = { status: "completed"; outputJson: string } | { status: "failed"; error: StoredError };

export type FinishResult = "finished" | "lost" | "conflict";

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
  metadata: Record<string, unknown> | null = null,
): Promise<FinishResult> {
  const e = endParameters(end, warnings, lastReceipt, metadata);
  const { rows } = await sql<{ finished: FinishResult }>`
    select durable_finish_run(${runId}, ${fence}::bigint, ${end.status}, ${e.output}::jsonb,
                              ${e.error}::jsonb, ${e.warnings}::jsonb, ${e.step}::jsonb) as finished`.execute(db);
  return rows[0]!.finished;
}

/**
 * Ends the run as finishRun does and, when it ended, claims the next due run in the same
 * statement (durable_finish_and_claim; docs/decisions.md, "Chained claims"). `next`: the run
 * claimed, or null when none was due; undefined when the run did not end (nothing was claimed), or
 * when the claim stopped at a bound with runs it did not reach (the loop claims again on its own).
 */
export async function finishRunAndClaim(
  db: DurableDb,
  runId: string,
  fence: number,
  end: RunEnd,
  warnings: string[],
  lastReceipt: StepOutcome | null,
  next: ClaimRequest,
  metadata: Record<string, unknown> | null = null,
): Promise<{ finished: FinishResult; next?: ClaimedRun | null }> {
  const e = endParameters(end, warnings, lastReceipt, metadata);
  const c = claimParameters(next);
  const { rows } = await sql<{ answer: RowObject }>`
    select durable_finish_and_claim(${runId}, ${fence}::bigint, ${end.status}, ${e.output}::jsonb,
                                    ${e.error}::jsonb, ${e.warnings}::jsonb, ${e.step}::jsonb,
                                    ${c.workflows}::jsonb, ${c.leaseMs}::bigint, ${c.exclude}::jsonb,
                                    ${c.limits}::jsonb, ${c.versions}::jsonb, ${c.rates}::jsonb,
                                    true) as answer`.execute(db);
  const answer = rows[0]!.answer;
  const finished = answer.finished as FinishResult;
  if (finished !== "finished") return { finished };
  const claimed = toClaimAnswer(answer.next ?? null);
  return claimed === "more" ? { finished } : { finished, next: claimed };
}

// ctx.setMetadata's last patches ride on the held-back receipt, or alone in the step parameter
// (no step_id: durable_finish_run only merges them) when no receipt is held back.
export function endParameters(
  end: RunEnd,
  warnings: string[],
  lastReceipt: StepOutcome | null,
  metadata: Record<string, unknown> | null,
) {
  const patch = metadata ?? undefined;
  return {
    output: end.status === "completed" ? end.outputJson : null,
    error: end.status === "failed" ? JSON.stringify(end.error) : null,
    warnings: JSON.stringify(warnings),
    step: lastReceipt
      ? stepOutcomeJson({ ...lastReceipt, ...(patch ? { metadata: { ...lastReceipt.metadata, ...patch } } : {}) })
      : patch
        ? JSON.stringify({ metadata: patch })
        : null,
  };
}
