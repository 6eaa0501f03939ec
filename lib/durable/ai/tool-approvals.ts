// `toolApprovals(runId)`: the tool calls of a run's agents that wait for signal `tool-approval`,
// for the page that approves or denies them (docs/guide/agents.md, "Approvals").
import { isStorableName } from "../names";
import { type AgentStepRecord, listAgentSteps } from "../store";
import type { PendingToolApproval } from "../engine/durable-api";
import { assertOpen, type DurableInstance } from "../engine/instance";

/** The most agent steps one read looks at: an agent with more is not one a page approves from. */
const MAX_AGENT_STEPS = 1000;

const TURN_ID = /^(.*)\/turn-\d+$/;
const APPROVAL_WAIT = /^(.*\/turn-\d+)\/approval-\d+$/;
/** A tool step, `<turn>/tool-<call>`; before it, `<agent>/tool-<call>` (steps/agent-step.ts, toolStepId). */
const TOOL_STEP = /^(.*\/turn-\d+)\/tool-(.+)$/;
const EARLIER_TOOL_STEP = /^(.*)\/tool-(.+)$/;

const key = (turnId: string, toolCallId: string) => `${turnId}\u0000${toolCallId}`;

/**
 * The calls a turn said need approval (its receipt's `approvals`) that no approval wait of that turn
 * answered and no tool step of that turn answered yet, oldest first; [] for an unknown or
 * unstorable id. Per turn: a model may use a call id again in a later turn.
 */
export async function listToolApprovals(instance: DurableInstance, runId: string): Promise<PendingToolApproval[]> {
  assertOpen(instance);
  if (!isStorableName(runId)) return [];
  const steps = await listAgentSteps(instance.db, runId, MAX_AGENT_STEPS);
  const turns = steps.filter((step) => step.kind === "ai" && step.status === "completed" && TURN_ID.test(step.stepId));
  const answered = answeredCalls(steps, turns);
  const pending: PendingToolApproval[] = [];
  for (const step of turns) {
    const turn = step.result as { approvals?: unknown; toolCalls?: unknown } | null;
    if (!Array.isArray(turn?.approvals)) continue;
    const calls = Array.isArray(turn.toolCalls) ? (turn.toolCalls as PendingToolApproval[]) : [];
    for (const toolCallId of turn.approvals as string[]) {
      const call = calls.find((c) => c.toolCallId === toolCallId);
      if (!call || answered.has(key(step.stepId, toolCallId))) continue;
      const agentId = TURN_ID.exec(step.stepId)![1]!;
      pending.push({ agentId, turnId: step.stepId, toolCallId, toolName: call.toolName, input: call.input });
    }
  }
  return pending;
}

/** The (turn, call) pairs an approval wait or a tool step answered. */
function answeredCalls(steps: AgentStepRecord[], turns: AgentStepRecord[]): Set<string> {
  // A tool step of the earlier shape answers the first turn of its agent that made the call.
  const firstTurn = new Map<string, string>();
  for (const turn of turns) {
    const calls = (turn.result as { toolCalls?: unknown } | null)?.toolCalls;
    const agentId = TURN_ID.exec(turn.stepId)![1]!;
    for (const call of Array.isArray(calls) ? (calls as { toolCallId?: unknown }[]) : []) {
      if (typeof call?.toolCallId !== "string") continue;
      if (!firstTurn.has(key(agentId, call.toolCallId))) firstTurn.set(key(agentId, call.toolCallId), turn.stepId);
    }
  }
  const answered = new Set<string>();
  for (const step of steps) {
    if (step.status !== "completed") continue;
    const result = step.result as { toolCallId?: unknown; turnId?: unknown } | null;
    const wait = APPROVAL_WAIT.exec(step.stepId);
    if (wait && typeof result?.toolCallId === "string" && (result.turnId ?? wait[1]) === wait[1]) {
      answered.add(key(wait[1]!, result.toolCallId));
    }
    const tool = TOOL_STEP.exec(step.stepId);
    if (tool) answered.add(key(tool[1]!, tool[2]!));
    const earlier = tool ? null : EARLIER_TOOL_STEP.exec(step.stepId);
    const turnId = earlier && firstTurn.get(key(earlier[1]!, earlier[2]!));
    if (earlier && turnId) answered.add(key(turnId, earlier[2]!));
  }
  return answered;
}
