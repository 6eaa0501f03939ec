// `toolApprovals(durable, runId)`: the tool calls of a run's agents that wait for signal
// `tool-approval`, for the page that approves or denies them (docs/guide/agents.md, "Approvals").
import type { Durable } from "../engine/durable-api";
import type { PayloadCodec } from "../encryption/payload-codec";
import { payloadCodecOf } from "../engine/payloads";
import { isStorableName } from "../names";
import { type AgentStepRecord, type DurableDb, listAgentSteps } from "../store";

/** A tool call of an agent that waits for its approval (`toolApprovals(durable, runId)`). */
export interface PendingToolApproval {
  /** The agent's step id (`ctx.step.ai.agent(id, …)`). */
  agentId: string;
  /** The turn that asked for the call. */
  turnId: string;
  toolCallId: string;
  toolName: string;
  /** The input the model gave the tool. */
  input: unknown;
}

declare module "../engine/durable-api" {
  interface WingMethods {
    /**
     * The tool calls of the run's agents waiting for signal `tool-approval` (`ToolApproval`), oldest
     * first: what a page shows with Approve and Deny (docs/guide/agents.md, "Approvals").
     * @deprecated use `toolApprovals(durable, runId)` from "durable-next/ai"
     */
    toolApprovals(runId: string): Promise<PendingToolApproval[]>;
  }
}

/** The most agent steps one read looks at: an agent with more is not one a page approves from. */
const MAX_AGENT_STEPS = 1000;

const TURN_ID = /^(.*)\/turn-\d+$/;
const APPROVAL_WAIT = /^(.*\/turn-\d+)\/approval-\d+$/;
/** A tool step, `<turn>/tool-<call>`; before it, `<agent>/tool-<call>` (agent-step.ts, toolStepId). */
const TOOL_STEP = /^(.*\/turn-\d+)\/tool-(.+)$/;
const EARLIER_TOOL_STEP = /^(.*)\/tool-(.+)$/;

const key = (turnId: string, toolCallId: string) => `${turnId}\u0000${toolCallId}`;

/**
 * The calls a turn said need approval (its receipt's `approvals`) that no approval wait of that turn
 * answered and no tool step of that turn answered yet, oldest first; [] for an unknown or
 * unstorable id. Per turn: a model may use a call id again in a later turn.
 *
 * @example
 * const pending = await toolApprovals(durable, runId); // [{ agentId, turnId, toolCallId, toolName, input }]
 */
export async function toolApprovals(durable: Pick<Durable, "db">, runId: string): Promise<PendingToolApproval[]> {
  // Results sealed at rest are opened with the instance's codec (engine/payloads.ts).
  return pendingToolCalls({ db: durable.db, codec: payloadCodecOf(durable) }, runId);
}

/** toolApprovals() over a store handle and a codec: what the approval source (ai/wing.ts) reads. */
export async function pendingToolCalls(
  reader: { db: DurableDb; codec: PayloadCodec },
  runId: string,
): Promise<PendingToolApproval[]> {
  if (!isStorableName(runId)) return [];
  const { codec } = reader;
  const steps = await Promise.all(
    (await listAgentSteps(reader.db, runId, MAX_AGENT_STEPS)).map(async (step) => ({
      ...step,
      result: await codec.open(step.result),
    })),
  );
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
    const wait = APPROVAL_WAIT.exec(step.stepId);
    const result = wait ? deliveredPayload(step.result) : null;
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

/**
 * The payload a signal wait's receipt holds: `{ payload, signalSeq }`, or the bare payload of a
 * receipt written before the wait recorded its delivery's seq.
 */
function deliveredPayload(result: unknown): { toolCallId?: unknown; turnId?: unknown } | null {
  if (result === null || typeof result !== "object") return null;
  const receipt = result as { payload?: unknown; signalSeq?: unknown };
  if ("signalSeq" in receipt && receipt.payload !== null && typeof receipt.payload === "object") {
    return receipt.payload as { toolCallId?: unknown; turnId?: unknown };
  }
  return receipt as { toolCallId?: unknown; turnId?: unknown };
}
