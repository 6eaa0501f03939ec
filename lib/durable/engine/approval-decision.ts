// What a decision on a signal approval (engine/approvals.ts) and on a wing's item (engine/approval-items.ts)
// share: its delivery and reason sealed under the run's id (engine/payloads.ts), and the refusals
// both SQL functions answer alike (docs/sql.md, "durable_decide_approval").
import { RunNotFoundError, RunStateConflictError } from "../errors";
import { toJsonText } from "../json";
import type { DecisionOutcome } from "../store";
import type { DurableInstance } from "./instance";

/** The signal payload a decision delivers and its reason, as stored: sealed under the run's id. */
export async function sealDecision(
  instance: DurableInstance,
  runId: string,
  payload: unknown,
  reason: string | null,
): Promise<{ payloadJson: string; reasonJson: string | null }> {
  const limit = instance.settings.maxResultBytes;
  const payloadJson = await instance.codec.sealJson(runId, toJsonText(payload, { limit }));
  const reasonJson = reason === null ? null : await instance.codec.sealJson(runId, JSON.stringify(reason));
  return { payloadJson, reasonJson };
}

/** Throws for the outcomes that refuse any decision: no such run, a finished run, no wait on `name`. */
export function refuseUnlessWaiting(outcome: DecisionOutcome, runId: string, name: string): void {
  if (outcome === "not_found") throw new RunNotFoundError(runId);
  if (outcome === "terminal") throw new RunStateConflictError(`run "${runId}" is finished; it takes no more decisions`);
  if (outcome === "not_waiting") {
    throw new RunStateConflictError(`run "${runId}" is not waiting for approval "${name}"`);
  }
}
