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
