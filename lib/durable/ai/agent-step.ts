import type { ModelMessage, ToolSet } from "ai";
import type { StepHost } from "../engine/run/step-host";
import type { StepParts } from "../engine/wings";
import { InvalidInputError } from "../errors";
import type { AiUsage, StepInfo } from "../types";
import type {
  AgentToolCall,
  AgentToolResult,
  AiAgentOptions,
  AiAgentResult,
  AiAgentStep,
  AgentToolStep,
  ToolApproval,
} from "./types";
import { type AgentTurn, turnBody } from "./agent-turn";
import { TOOL_APPROVAL_SIGNAL } from "./tool-approval";
import { txToolOf } from "./tx-tool";

const DEFAULT_MAX_STEPS = 10;

/** The steps the agent is made of, each written after a held-back receipt (engine/wings.ts). */
export type AgentParts = StepParts;

/**
 * `ctx.step.ai.agent`: the AI SDK's tool loop with every model turn a step (`<id>/turn-<n>`) and
 * every tool call a step of its own (`<id>/turn-<n>/tool-<toolCallId>`, a `run` step with its
 * external key, or a `tx` step for a `txTool`; see `toolStepId`). A replay answers finished turns and tools from their
 * receipts: no model request, no tool run. A call whose tool `needsApproval` waits for signal
 * `tool-approval` first, with nothing running (docs/guide/agents.md).
 */
export async function runAgent(
  host: StepHost,
  parts: AgentParts,
  id: string,
  options: AiAgentOptions,
): Promise<AiAgentResult> {
  const { tools = {}, maxSteps = DEFAULT_MAX_STEPS, stopWhen, stream = false, prompt, messages, ...settings } = options;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new InvalidInputError(`agent "${id}": maxSteps must be a whole number of at least 1`);
  }
  const conversation: ModelMessage[] = startingMessages(id, prompt, messages);
  const added: ModelMessage[] = [];
  const steps: AiAgentStep[] = [];
  const stopConditions = stopWhen === undefined ? [] : Array.isArray(stopWhen) ? stopWhen : [stopWhen];
  // What the last turn's txTool calls answered: a tx step has no stream writer, so the next turn
  // writes their output chunks first (docs/guide/agents.md, "A tool that writes to the database").
  let unshown: unknown[] = [];
  // The call ids of the turns before this one: a model may use one again (toolStepId).
  const calledBefore = new Set<string>();
  for (let n = 1; ; n++) {
    const turnId = `${id}/turn-${n}`;
    const body = turnBody(host, {
      stepId: turnId,
      partPrefix: `${n}-`,
      settings,
      tools: tools as ToolSet,
      messages: [...conversation],
      stream,
      leadingChunks: unshown,
    });
    const turn: AgentTurn = await parts.execute(turnId, "ai", body, options.turnOptions);
    conversation.push(...turn.messages);
    added.push(...turn.messages);
    const stepIds = new Map(turn.toolCalls.map((c) => [c.toolCallId, toolStepId(host, id, turnId, c, calledBefore)]));
    for (const c of turn.toolCalls) calledBefore.add(c.toolCallId);
    const toolResults = await answerCalls(host, parts, stepIds, turnId, turn, tools as ToolSet, conversation, options);
    unshown = stream
      ? toolResults.filter((r) => !("denied" in r) && txToolOf(toolNamed(tools, r.toolName))).map(outputChunk)
      : [];
    const step: AiAgentStep = { ...turnSummary(turn), toolResults };
    steps.push(step);
    if (toolResults.length > 0) {
      const toolMessage: ModelMessage = { role: "tool", content: toolResults.map(resultPart) };
      conversation.push(toolMessage);
      added.push(toolMessage);
    }
    const stop =
      turn.toolCalls.length === 0 || n >= maxSteps || (await anyStops(stopConditions, steps as unknown as never[]));
    if (stop) {
      return { text: turn.text, messages: added, steps, usage: sumUsage(steps), finishReason: turn.finishReason };
    }
  }
}

function startingMessages(id: string, prompt: AiAgentOptions["prompt"], messages: AiAgentOptions["messages"]) {
  if (prompt !== undefined && messages !== undefined) {
    throw new InvalidInputError(`agent "${id}": give prompt or messages, not both`);
  }
  if (messages !== undefined) return [...messages];
  if (prompt === undefined) throw new InvalidInputError(`agent "${id}": give a prompt or messages`);
  return typeof prompt === "string" ? [{ role: "user" as const, content: prompt }] : [...prompt];
}

/**
 * The answers to a turn's tool calls, in the order the model made them: the calls that need no
 * approval run at once, side by side; then the approvals are waited for, one delivery at a time;
 * then the approved calls run and the denied ones are answered as denied.
 */
async function answerCalls(
  host: StepHost,
  parts: AgentParts,
  stepIds: Map<string, string>,
  turnId: string,
  turn: AgentTurn,
  tools: ToolSet,
  conversation: ModelMessage[],
  options: AiAgentOptions,
): Promise<AgentToolResult[]> {
  const results = new Map<string, AgentToolResult>();
  const waiting = new Set(turn.approvals);
  const call = (c: AgentToolCall, approval?: ToolApproval) =>
    answerCall(host, parts, stepIds.get(c.toolCallId)!, c, tools, conversation, options, approval).then(
      (r) => void results.set(c.toolCallId, r),
    );
  await Promise.all(turn.toolCalls.filter((c) => !waiting.has(c.toolCallId)).map((c) => call(c)));
  if (waiting.size > 0) {
    const approvals = await collectApprovals(parts, turnId, waiting);
    await Promise.all(
      turn.toolCalls.filter((c) => waiting.has(c.toolCallId)).map((c) => call(c, approvals.get(c.toolCallId))),
    );
  }
  return turn.toolCalls.map((c) => results.get(c.toolCallId)!);
}

/**
 * Waits for signal `tool-approval` until every call in `waiting` has its answer. Each wait is a
 * step of its own (`<turn>/approval-<k>`) taking the oldest delivery no earlier wait took, so a
 * replay reads the same answers in the same order; a delivery naming another call, or another
 * turn (`turnId`: a call id a model used again), is passed over.
 */
async function collectApprovals(parts: AgentParts, turnId: string, waiting: Set<string>) {
  const answers = new Map<string, ToolApproval>();
  for (let k = 1; answers.size < waiting.size; k++) {
    const payload = (await parts.waitForSignal(TOOL_APPROVAL_SIGNAL, {
      id: `${turnId}/approval-${k}`,
    })) as ToolApproval;
    const forThisTurn = payload?.turnId === undefined || payload.turnId === turnId;
    if (payload && forThisTurn && waiting.has(payload.toolCallId) && !answers.has(payload.toolCallId)) {
      answers.set(payload.toolCallId, payload);
    }
  }
  return answers;
}

/**
 * A tool call's step id: `<turn>/tool-<toolCallId>`, unique per turn, since a model may use a call
 * id again in a later turn (the AI SDK's own loop takes that). Releases before it named the step
 * `<id>/tool-<toolCallId>`; a run recorded with them, say parked on an approval while a deploy
 * came, replays that call from the old receipt (its output, its attempts, its external key):
 * the old id answers the first turn that made the call, when the ledger holds it (docs/rules.md,
 * rule 13).
 */
function toolStepId(host: StepHost, id: string, turnId: string, call: AgentToolCall, calledBefore: Set<string>) {
  const earlier = `${id}/tool-${call.toolCallId}`;
  if (!calledBefore.has(call.toolCallId) && host.inLedger(earlier)) return earlier;
  return `${turnId}/tool-${call.toolCallId}`;
}

/** One call's answer, a step of its own: the tool's output, its error, or the denial. */
async function answerCall(
  host: StepHost,
  parts: AgentParts,
  stepId: string,
  call: AgentToolCall,
  tools: ToolSet,
  conversation: ModelMessage[],
  options: AiAgentOptions,
  approval?: ToolApproval,
): Promise<AgentToolResult> {
  const base = { toolCallId: call.toolCallId, toolName: call.toolName };
  const tool = toolNamed(tools, call.toolName);
  const stream = options.stream === true;
  if (call.error !== undefined || !tool) {
    // The model asked for a tool it does not have, or gave input its schema refuses: it is told so.
    return { ...base, error: call.error ?? `no tool named "${call.toolName}"` };
  }
  if (approval && !approval.approved) {
    return parts.run(stepId, () => {
      if (stream) parts.stream(stepId).write({ type: "tool-output-denied", toolCallId: call.toolCallId });
      return { ...base, denied: true, ...(approval.reason !== undefined ? { reason: approval.reason } : {}) };
    });
  }
  const retries = options.toolOptions?.retries ?? 0;
  const context = (s: StepInfo) => ({
    toolCallId: call.toolCallId,
    messages: [...conversation],
    abortSignal: s.abortSignal,
    experimental_context: toolStepOf(s),
  });
  const txExecute = txToolOf(tool);
  if (txExecute) {
    try {
      return await parts.tx(
        stepId,
        async (tx, s) => ({ ...base, output: (await txExecute(call.input, { ...context(s), tx })) ?? null }),
        options.toolOptions,
      );
    } catch (error) {
      // Failed after its retries, its write rolled back: the model is told the error, as for any tool.
      if (!host.isRecordedFailure(error)) throw error;
      return { ...base, error: error instanceof Error ? error.message : String(error) };
    }
  }
  if (typeof tool.execute !== "function") return { ...base, error: `tool "${call.toolName}" has no execute` };
  return parts.run(
    stepId,
    async (s) => {
      try {
        const output = await tool.execute!(call.input as never, context(s));
        if (stream) {
          parts
            .stream(stepId)
            .write({ type: "tool-output-available", toolCallId: call.toolCallId, output: output ?? null });
        }
        return { ...base, output: output ?? null };
      } catch (error) {
        // Retried while the step's retries last; after them the model is told the error.
        if (s.attempt <= retries || s.abortSignal.aborted) throw error;
        const errorText = error instanceof Error ? error.message : String(error);
        if (stream) parts.stream(stepId).write({ type: "tool-output-error", toolCallId: call.toolCallId, errorText });
        return { ...base, error: errorText };
      }
    },
    options.toolOptions,
  );
}

const toolNamed = (tools: ToolSet, name: string) => (Object.hasOwn(tools, name) ? tools[name] : undefined);

/** The UI message chunk that shows a call's answer. */
function outputChunk(result: AgentToolResult): unknown {
  if ("error" in result) return { type: "tool-output-error", toolCallId: result.toolCallId, errorText: result.error };
  return {
    type: "tool-output-available",
    toolCallId: result.toolCallId,
    output: "output" in result ? result.output : null,
  };
}

/** What a tool's `execute` is told of its step, as `options.experimental_context` (read it with `toolStep`). */
function toolStepOf(s: StepInfo): AgentToolStep {
  return { stepId: s.stepId, externalKey: s.externalKey, attempt: s.attempt, isReclaim: s.isReclaim };
}

/** The tool message part that answers a call. */
function resultPart(result: AgentToolResult) {
  const output =
    "denied" in result && result.denied
      ? { type: "execution-denied" as const, ...(result.reason !== undefined ? { reason: result.reason } : {}) }
      : "error" in result && result.error !== undefined
        ? { type: "error-text" as const, value: result.error }
        : "output" in result && typeof result.output === "string"
          ? { type: "text" as const, value: result.output }
          : { type: "json" as const, value: ("output" in result ? (result.output ?? null) : null) as never };
  return { type: "tool-result" as const, toolCallId: result.toolCallId, toolName: result.toolName, output };
}

/** A turn as the loop reports it (`steps` of the result; what stop conditions are given). */
function turnSummary(turn: AgentTurn): Omit<AiAgentStep, "toolResults"> {
  return {
    text: turn.text,
    ...(turn.reasoningText !== undefined ? { reasoningText: turn.reasoningText } : {}),
    toolCalls: turn.toolCalls,
    finishReason: turn.finishReason,
    usage: turn.usage,
    response: turn.response,
  };
}

/** The SDK's stop conditions (`stepCountIs`, `hasToolCall`, your own), given the turns so far. */
async function anyStops(conditions: NonNullable<AiAgentOptions["stopWhen"]>[], steps: never[]): Promise<boolean> {
  for (const condition of conditions as ((o: { steps: never[] }) => boolean | PromiseLike<boolean>)[]) {
    if (await condition({ steps })) return true;
  }
  return false;
}

/** The turns' usage added up, field by field (a field no turn reported stays absent). */
function sumUsage(steps: AiAgentStep[]): AiUsage {
  const total: Record<string, number> = {};
  for (const step of steps) {
    for (const [key, value] of Object.entries(step.usage)) {
      if (typeof value === "number") total[key] = (total[key] ?? 0) + value;
    }
  }
  return total as AiUsage;
}
