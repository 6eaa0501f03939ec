// The ai wing's approval source (engine/wings.ts): the tool calls waiting for signal `tool-approval`,
// listed by durable.approvals() and decided by durable.decide() (docs/guide/approvals.md, "Tool
// approvals"). The core calls it through the registry; it never imports this file.
import type { ApprovalSource, WingApproval } from "../engine/wings";
import { TOOL_APPROVAL_SIGNAL } from "./tool-approval";
import { pendingToolCalls } from "./tool-approvals";

/** A wait of an agent for its approvals: `<turn>/approval-<k>` (agent-step.ts, collectApprovals). */
const APPROVAL_WAIT = /^(.*\/turn-\d+)\/approval-\d+$/;

export const toolApprovalSource: ApprovalSource = {
  signal: TOOL_APPROVAL_SIGNAL,
  async pending(reader, runId, stepId) {
    const turnId = stepId === undefined ? undefined : APPROVAL_WAIT.exec(stepId)?.[1];
    if (stepId !== undefined && turnId === undefined) return [];
    const calls = await pendingToolCalls(reader, runId);
    return calls
      .filter((call) => turnId === undefined || call.turnId === turnId)
      .map(
        (call): WingApproval => ({
          // The call's tool step id: unique per turn, as a model may use a call id again.
          key: `${call.turnId}/tool-${call.toolCallId}`,
          turnId: call.turnId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
        }),
      );
  },
  payload(item, { approved, actor, reason }) {
    return {
      toolCallId: item.toolCallId,
      turnId: item.turnId,
      approved,
      actor,
      ...(reason === null ? {} : { reason }),
    };
  },
};
