// Approvals a wing lists item by item (engine/wings.ts, ApprovalSource): the ai wing's tool calls
// waiting on signal `tool-approval`, in durable.approvals() beside the signals a workflow marks, and
// decided by durable.decide() with the first decision winning (docs/guide/approvals.md, "Tool
// approvals"; the SQL in docs/sql.md, "durable_decide_approval_item").
import type { ApprovalDecision, DecideInput, DecideResult, PendingApproval } from "./approval-types";
import { InvalidInputError, RunStateConflictError } from "../errors";
import { type ApprovalRow, decideApprovalItem, decidedKeys } from "../store";
import type { AnyWorkflow } from "../types";
import { refuseUnlessWaiting, sealDecision } from "./approval-decision";
import type { DurableInstance } from "./instance";
import { validateSignal } from "./validate-signal";
import { type ApprovalSource, approvalSources } from "./wings";

/** The longest tool call id or turn id decide() takes. */
const MAX_ID_LENGTH = 1000;

/** The signals whose waits the loaded wings list item by item. */
export const itemSignals = (): string[] => approvalSources().map((source) => source.signal);

/** The wing's source of approval `name`, if a loaded wing lists its waits item by item. */
export const approvalSourceFor = (name: string): ApprovalSource | undefined =>
  approvalSources().find((source) => source.signal === name);

/** A wait's items not yet decided, as approvals() lists them: one per tool call. */
export async function itemsOfWait(instance: DurableInstance, row: ApprovalRow): Promise<PendingApproval[]> {
  const source = approvalSourceFor(row.name);
  if (!source) return [];
  const items = await source.pending({ db: instance.db, codec: instance.codec }, row.runId, row.stepId);
  // A decision recorded but its signal not yet taken by the run is no longer pending.
  const decided = await decidedKeys(
    instance.db,
    row.runId,
    items.map((item) => item.key),
  );
  return items
    .filter((item) => !decided.has(item.key))
    .map((item) => ({
      kind: "tool",
      runId: row.runId,
      workflow: row.workflow,
      name: row.name,
      stepId: row.stepId,
      input: item.input,
      tags: row.tags,
      waitingSince: row.waitingSince,
      ageMs: row.ageMs,
      quorum: 1,
      decisions: [],
      toolCallId: item.toolCallId,
      toolName: item.toolName,
      turnId: item.turnId,
    }));
}

function checkId(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_ID_LENGTH) {
    throw new InvalidInputError(`${what} is a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  }
  return value;
}

/**
 * One person's decision on one item (`toolCallId`) of the run's wait on the source's signal: the
 * first decision on the item records its row and delivers the signal; any later one is a
 * RunStateConflictError (409). The delivered payload names the actor, so the wait's receipt does.
 */
export async function decideItem(
  instance: DurableInstance,
  source: ApprovalSource,
  definition: AnyWorkflow | undefined,
  input: DecideInput,
): Promise<DecideResult> {
  const { runId, name, actor, approved } = input;
  const toolCallId = checkId(input.toolCallId, `approval "${name}" needs a toolCallId, which`);
  const turnId = input.turnId === undefined ? undefined : checkId(input.turnId, "turnId");
  const items = await source.pending({ db: instance.db, codec: instance.codec }, runId);
  const item = items.find((i) => i.toolCallId === toolCallId && (turnId === undefined || i.turnId === turnId));
  if (!item) throw new RunStateConflictError(`run "${runId}" has no tool call "${toolCallId}" waiting for approval`);
  const reason = input.reason ?? null;
  const decision: ApprovalDecision = { approved, actor, reason };
  const payload = validateSignal(definition, name, source.payload(item, decision));
  const { payloadJson, reasonJson } = await sealDecision(instance, runId, payload, reason);
  const answer = await decideApprovalItem(instance.db, {
    runId,
    name,
    key: item.key,
    actor,
    approved,
    reasonJson,
    payloadJson,
  });
  refuseUnlessWaiting(answer.outcome, runId, name);
  if (answer.outcome === "decided") {
    throw new RunStateConflictError(`tool call "${toolCallId}" of run "${runId}" is already decided`);
  }
  return { ok: true, completed: true, approvals: approved ? 1 : 0, quorum: 1 };
}
