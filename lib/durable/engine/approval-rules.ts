// defineWorkflow({ approvals }) checked, and the rules a run's version declares (docs/guide/approvals.md).
import { z } from "zod";
import type { ApprovalRule } from "../signal-types";
import { InvalidInputError } from "../errors";
import { isStorableName, NAME_RULE } from "../names";
import type { AnyWorkflow } from "../types";

/**
 * What a wait on an approval resolves to, for `signals: { deploy: approvalDecision }`: the
 * decision that completed the wait, as `decide()` delivers it.
 */
export const approvalDecision = z.object({
  approved: z.boolean(),
  actor: z.string().min(1),
  reason: z.string().nullable(),
});

/** A rule as the engine uses it: the quorum resolved. */
export interface ResolvedApprovalRule {
  quorum: number;
  approvers?: ApprovalRule["approvers"];
}

/** The most distinct actors a quorum may ask for. */
export const MAX_QUORUM = 100;

/**
 * Refuses an `approvals` that is not an object of `true` or `{ quorum?, approvers? }` by signal
 * name, or names a signal the workflow's declared signals do not (its waits could never be decided).
 */
export function validateApprovals(workflow: AnyWorkflow): void {
  const { approvals } = workflow;
  if (approvals === undefined) return;
  const what = `workflow "${workflow.name}": approvals is an object of true or { quorum?, approvers? } by signal name`;
  if (approvals === null || typeof approvals !== "object" || Array.isArray(approvals))
    throw new InvalidInputError(what);
  const signals = workflow.signals as Record<string, unknown> | undefined;
  for (const [name, rule] of Object.entries(approvals)) {
    if (!isStorableName(name)) throw new InvalidInputError(`${what}; a signal name is ${NAME_RULE}`);
    if (signals && Object.keys(signals).length > 0 && !Object.hasOwn(signals, name)) {
      throw new InvalidInputError(`workflow "${workflow.name}": approval "${name}" is not one of its signals`);
    }
    if (rule === true) continue;
    if (rule === null || typeof rule !== "object" || Array.isArray(rule)) throw new InvalidInputError(what);
    const { quorum, approvers } = rule as ApprovalRule;
    if (quorum !== undefined && (!Number.isInteger(quorum) || quorum < 1 || quorum > MAX_QUORUM)) {
      throw new InvalidInputError(
        `workflow "${workflow.name}": approvals["${name}"].quorum is a whole number from 1 to ${MAX_QUORUM}`,
      );
    }
    if (approvers !== undefined && typeof approvers !== "function") {
      throw new InvalidInputError(
        `workflow "${workflow.name}": approvals["${name}"].approvers is a function (actor, input) => boolean`,
      );
    }
  }
}

/** The rule of approval `name` in `workflow`, or undefined when it marks no such approval. */
export function approvalRuleOf(workflow: AnyWorkflow | undefined, name: string): ResolvedApprovalRule | undefined {
  const approvals = workflow?.approvals;
  if (!approvals || !Object.hasOwn(approvals, name)) return undefined;
  const rule = approvals[name];
  if (rule === true || rule === undefined) return { quorum: 1 };
  return { quorum: rule.quorum ?? 1, ...(rule.approvers ? { approvers: rule.approvers } : {}) };
}
