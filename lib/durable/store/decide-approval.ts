import { sql } from "kysely";
import type { DurableDb } from "./tables";

export type DecisionOutcome =
  | "not_found"
  | "terminal"
  | "not_waiting"
  | "decided"
  | "repeat_actor"
  | "recorded"
  | "completed";

export interface DecisionRequest {
  runId: string;
  name: string;
  actor: string;
  approved: boolean;
  /** Sealed (engine/payloads.ts), or null when no reason was given. */
  reasonJson: string | null;
  /** Distinct approving actors that complete the wait. */
  quorum: number;
  /** The signal the wait takes when this decision completes it, sealed. */
  payloadJson: string;
}

/**
 * Records one person's decision on the run's wait for approval signal `name`
 * (durable_decide_approval): under the run's row lock, so of racing decisions exactly one
 * completes the wait; the others answer `decided`, or `repeat_actor` for an actor who decided.
 */
export async function decideApproval(
  db: DurableDb,
  decision: DecisionRequest,
): Promise<{ outcome: DecisionOutcome; stepId?: string; approvals?: number }> {
  const { rows } = await sql<{ answer: { outcome: DecisionOutcome; stepId?: string; approvals?: number } }>`
    select durable_decide_approval(${decision.runId}, ${decision.name}, ${decision.actor},
                                   ${decision.approved}::boolean, ${decision.reasonJson}::jsonb,
                                   ${decision.quorum}::integer, ${decision.payloadJson}::jsonb) as answer`.execute(db);
  return rows[0]!.answer;
}

/** One decision on an item of a wait a wing lists (an agent's tool call), keyed within the run. */
export interface ItemDecisionRequest {
  runId: string;
  /** The signal the wait takes. */
  name: string;
  /** The item's key: the decision row's step_id, so the first decision on it wins. */
  key: string;
  actor: string;
  approved: boolean;
  reasonJson: string | null;
  payloadJson: string;
}

/**
 * Records the first decision on an item (durable_decide_approval_item) and delivers its signal,
 * under the run's row lock; a later one answers `decided`.
 */
export async function decideApprovalItem(
  db: DurableDb,
  decision: ItemDecisionRequest,
): Promise<{ outcome: DecisionOutcome; stepId?: string }> {
  const { rows } = await sql<{ answer: { outcome: DecisionOutcome; stepId?: string } }>`
    select durable_decide_approval_item(${decision.runId}, ${decision.name}, ${decision.key}, ${decision.actor},
                                        ${decision.approved}::boolean, ${decision.reasonJson}::jsonb,
                                        ${decision.payloadJson}::jsonb) as answer`.execute(db);
  return rows[0]!.answer;
}

/** Which of `keys` of the run have a decision row: items decided, their signal maybe not yet taken. */
export async function decidedKeys(db: DurableDb, runId: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .selectFrom("durable_approval_decisions")
    .select("step_id")
    .where("run_id", "=", runId)
    .where("step_id", "in", keys)
    .execute();
  return new Set(rows.map((row) => row.step_id));
}
