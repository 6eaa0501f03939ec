// `toolApprovals(runId)`: the tool calls of a run's agents that wait for signal `tool-approval`,
// for the page that approves or denies them (docs/guide/agents.md, "Approvals").
import { isStorableName } from "../names";
import { listAgentSteps } from "../store";
import type { PendingToolApproval } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";

/** The most agent steps one read looks at: an agent with more is not one a page approves from. */
const MAX_AGENT_STEPS = 1000;

const TURN_ID = /^(.*)\/turn-\d+$/;

/**
 * The calls a turn said need approval (its receipt's `approvals`) that no approval wait of that turn
 * answered and no tool step answered yet, oldest first; [] for an unknown or unstorable id.
 */
export async function listToolApprovals(instance: DurableInstance, runId: string): Promise<PendingToolApproval[]> {
  assertOpen(instance);
  if (!isStorableName(runId)) return [];
  const steps = await listAgentSteps(instance.db, runId, MAX_AGENT_STEPS);
  const answered = new Set<string>();
  for (const step of steps) {
    const result = step.result as { toolCallId?: unknown } | null;
    if (step.status !== "completed") continue;
    if (/\/approval-\d+$/.test(step.stepId) && typeof result?.toolCallId === "string") answered.add(result.toolCallId);
    const tool = /\/tool-(.+)$/.exec(step.stepId);
    if (tool) answered.add(tool[1]!);
  }
  const pending: PendingToolApproval[] = [];
  for (const step of steps) {
    const agent = TURN_ID.exec(step.stepId);
    const turn = step.result as { approvals?: unknown; toolCalls?: unknown } | null;
    if (!agent || step.kind !== "ai" || step.status !== "completed" || !Array.isArray(turn?.approvals)) continue;
    const calls = Array.isArray(turn.toolCalls) ? (turn.toolCalls as PendingToolApproval[]) : [];
    for (const toolCallId of turn.approvals as string[]) {
      const call = calls.find((c) => c.toolCallId === toolCallId);
      if (!call || answered.has(toolCallId)) continue;
      pending.push({ agentId: agent[1]!, turnId: step.stepId, toolCallId, toolName: call.toolName, input: call.input });
    }
  }
  return pending;
}
