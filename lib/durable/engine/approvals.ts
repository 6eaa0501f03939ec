// durable.decide() and durable.approvals(): the waits a person decides, across runs
// (docs/guide/approvals.md; the SQL in docs/sql.md, "durable_decide_approval").
import type { ApprovalPage, ApprovalsOptions, DecideInput, DecideResult, PendingApproval } from "./approval-types";
import { InvalidInputError, RunNotFoundError, RunStateConflictError } from "../errors";
import { NotAnApproverError } from "./approval-errors";
import { isStorableName, storableName } from "../names";
import {
  type ApprovalTarget,
  checkApprovalCursor,
  decideApproval,
  findRunWorkflow,
  listApprovals,
  readRunInput,
} from "../store";
import { approvalSourceFor, decideItem, itemSignals, itemsOfWait } from "./approval-items";
import { refuseUnlessWaiting, sealDecision } from "./approval-decision";
import { approvalRuleOf } from "./approval-rules";
import { checkRange } from "./check-range";
import { versionKey, type WorkflowRegistry } from "./define-workflow";
import { assertOpen, type DurableInstance } from "./instance";
import { validateSignal } from "./validate-signal";

/** The longest reason a decision carries, in UTF-16 code units. */
export const MAX_REASON_LENGTH = 2000;

/** Checks a decision's fields; throws InvalidInputError naming the first bad one. */
function checkDecision(input: DecideInput): void {
  if (input === null || typeof input !== "object")
    throw new InvalidInputError("decide() takes { runId, name, actor, approved, reason?, toolCallId? }");
  storableName(input.name, "an approval name");
  storableName(input.actor, "an actor");
  if (typeof input.approved !== "boolean") throw new InvalidInputError("approved is true or false");
  const { reason } = input;
  if (reason !== undefined && (typeof reason !== "string" || reason.length > MAX_REASON_LENGTH)) {
    throw new InvalidInputError(`reason is a string of at most ${MAX_REASON_LENGTH} characters`);
  }
  if (input.workflow !== undefined) storableName(input.workflow, "a workflow name");
}

/**
 * One person's decision on the run's wait for approval `name`. The approvers check runs first; the
 * decision is then recorded under the run's row lock, and the one that completes the wait (a
 * reject, or the approval reaching the quorum) delivers its `ApprovalDecision` to the wait.
 * @throws NotAnApproverError when `approvers` refuses the actor; RunStateConflictError when the
 *   run is not waiting for that approval, it was decided, or the actor decided already
 */
export async function decide(instance: DurableInstance, input: DecideInput): Promise<DecideResult> {
  assertOpen(instance);
  checkDecision(input);
  const { runId, name, actor, approved } = input;
  if (!isStorableName(runId)) throw new RunNotFoundError(String(runId));
  const found = await findRunWorkflow(instance.db, runId);
  if (found === null) throw new RunNotFoundError(runId);
  if (input.workflow !== undefined && input.workflow !== found.workflow) {
    throw new RunStateConflictError(`run "${runId}" belongs to workflow "${found.workflow}", not "${input.workflow}"`);
  }
  const definition = instance.registry.byVersion.get(versionKey(found.workflow, found.version));
  // A wait a wing lists item by item (an agent's tool calls): one decision per item.
  const source = approvalSourceFor(name);
  if (source) return decideItem(instance, source, definition, input);
  if (input.toolCallId !== undefined || input.turnId !== undefined) {
    throw new InvalidInputError(`approval "${name}" takes no toolCallId or turnId`);
  }
  const rule = approvalRuleOf(definition, name);
  if (!rule) throw new InvalidInputError(`workflow "${found.workflow}" marks no approval "${name}"`);
  if (rule.approvers) {
    const runInput = await instance.codec.open(await readRunInput(instance.db, runId));
    if ((await rule.approvers(actor, runInput)) !== true) {
      throw new NotAnApproverError(`"${actor}" may not decide approval "${name}" of run "${runId}"`);
    }
  }
  const reason = input.reason ?? null;
  const payload = validateSignal(definition, name, { approved, actor, reason });
  const { payloadJson, reasonJson } = await sealDecision(instance, runId, payload, reason);
  const answer = await decideApproval(instance.db, {
    runId,
    name,
    actor,
    approved,
    reasonJson,
    quorum: rule.quorum,
    payloadJson,
  });
  const approvals = answer.approvals ?? 0;
  refuseUnlessWaiting(answer.outcome, runId, name);
  switch (answer.outcome) {
    case "decided":
      throw new RunStateConflictError(`approval "${name}" of run "${runId}" is already decided`);
    case "repeat_actor":
      throw new RunStateConflictError(`"${actor}" already decided approval "${name}" of run "${runId}"`);
    default:
      return { ok: true, completed: answer.outcome === "completed", approvals, quorum: rule.quorum };
  }
}

/**
 * A page of the waits a person decides, newest run first, filtered by `tag` and `workflow`. `limit`
 * counts waits: an agent's wait on `tool-approval` lists each call it waits for (engine/approval-items.ts).
 */
export async function listPendingApprovals(
  instance: DurableInstance,
  options: ApprovalsOptions = {},
): Promise<ApprovalPage> {
  assertOpen(instance);
  if (options === null || typeof options !== "object")
    throw new InvalidInputError("approvals() takes { tag?, workflow?, limit?, cursor? }");
  const { tag, workflow, cursor } = options;
  if (tag !== undefined) storableName(tag, "a tag");
  if (workflow !== undefined) storableName(workflow, "a workflow name");
  const limit = checkRange("limit", options.limit ?? 50, 1, 200);
  if (cursor !== undefined) checkApprovalCursor(storableName(cursor, "a cursor"));
  const page = await listApprovals(instance.db, {
    targets: approvalTargets(instance.registry),
    itemSignals: itemSignals(),
    limit,
    ...(tag === undefined ? {} : { tag }),
    ...(workflow === undefined ? {} : { workflow }),
    ...(cursor === undefined ? {} : { cursor }),
  });
  const approvals = await Promise.all(
    page.rows.map(async (row): Promise<PendingApproval[]> => {
      if (row.itemized) return itemsOfWait(instance, row);
      const definition = instance.registry.byVersion.get(versionKey(row.workflow, row.version));
      const approval: PendingApproval = {
        kind: "signal",
        runId: row.runId,
        workflow: row.workflow,
        name: row.name,
        stepId: row.stepId,
        input: await instance.codec.open(row.input),
        tags: row.tags,
        waitingSince: row.waitingSince,
        ageMs: row.ageMs,
        quorum: approvalRuleOf(definition, row.name)?.quorum ?? 1,
        decisions: await Promise.all(
          row.decisions.map(async (d) => ({
            actor: d.actor,
            approved: d.approved,
            reason: (await instance.codec.open(d.reason)) as string | null,
            decidedAt: new Date(d.decidedAt),
          })),
        ),
      };
      return [approval];
    }),
  );
  return { approvals: approvals.flat(), nextCursor: page.nextCursor };
}

/** Every (workflow, signal name) any registered version marks as an approval: what approvals() lists. */
export function approvalTargets(registry: WorkflowRegistry): ApprovalTarget[] {
  const seen = new Set<string>();
  const targets: ApprovalTarget[] = [];
  for (const workflow of registry.byVersion.values()) {
    for (const name of Object.keys(workflow.approvals ?? {})) {
      const key = `${workflow.name}\u0000${name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      targets.push({ workflow: workflow.name, name });
    }
  }
  return targets;
}
