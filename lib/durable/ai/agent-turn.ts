import type { LanguageModelUsage, ModelMessage, ToolSet } from "ai";
import type { StepHost } from "../engine/run/step-host";
import { resultJson } from "../steps/effect-body";
import type { Body } from "../steps/effect-steps";
import type { AiUsage } from "../types";
import type { AgentToolCall, AiAgentOptions } from "./types";
import { compact, usageOf } from "./ai-usage";
import { loadAi } from "./load-ai";

/**
 * What a turn of `ctx.step.ai.agent` stores (step `<id>/turn-<n>`): the model's answer and the
 * tool calls it asked for, never the SDK's object. A replay answers the turn from it.
 */
export interface AgentTurn {
  text: string;
  reasoningText?: string;
  finishReason: string;
  usage: AiUsage;
  response: { id?: string; modelId?: string };
  /** The assistant message(s) the turn adds to the conversation (the SDK's `response.messages`). */
  messages: ModelMessage[];
  toolCalls: AgentToolCall[];
  /** The calls that wait for signal `tool-approval` before they run (their tool's `needsApproval`). */
  approvals: string[];
}

/** The SDK's own options of a turn: the agent's, less what the agent decides itself. */
type TurnSettings = Omit<AiAgentOptions, "tools" | "maxSteps" | "stopWhen" | "stream" | "prompt" | "messages">;

/** One model call of the loop: the conversation so far, the tools as schemas only (no execute). */
export interface TurnRequest {
  stepId: string;
  /** `<n>-`: prefixes the text and reasoning part ids this turn streams, unique across turns. */
  partPrefix: string;
  settings: TurnSettings;
  tools: ToolSet;
  messages: ModelMessage[];
  stream: boolean;
  /** Written before the model's chunks (the previous turn's txTool outputs). */
  leadingChunks: unknown[];
}

/**
 * The body of a turn: one model call with the tools as the model sees them, and `stopWhen` of one
 * step, so the SDK runs no tool; each call the model asks for becomes a step of its own
 * (agent-step.ts). Whether a call needs approval is decided here, once, and stored.
 */
export function turnBody(host: StepHost, request: TurnRequest): Body {
  return async (s) => {
    const ai = await loadAi();
    const call = {
      ...request.settings,
      messages: request.messages,
      tools: schemasOnly(request.tools),
      stopWhen: ai.stepCountIs(1),
      abortSignal: s.abortSignal,
    };
    const answer = request.stream
      ? await streamedTurn(ai, host, request, call, s.abortSignal)
      : await plainTurn(ai, call);
    const approvals: string[] = [];
    for (const toolCall of answer.toolCalls) {
      if (toolCall.error === undefined && (await needsApproval(request, toolCall))) approvals.push(toolCall.toolCallId);
    }
    if (request.stream && answer.finishStep) {
      const out = host.stream(request.stepId);
      for (const toolCallId of approvals)
        out.write({ type: "tool-approval-request", approvalId: toolCallId, toolCallId });
      out.write(answer.finishStep);
    }
    const { finishStep: _finishStep, ...turn } = answer;
    return { json: resultJson(host, { ...turn, approvals } satisfies AgentTurn, request.stepId) };
  };
}

type Answer = Omit<AgentTurn, "approvals"> & { finishStep?: unknown };
type Ai = typeof import("ai");

async function plainTurn(ai: Ai, call: Record<string, unknown>): Promise<Answer> {
  const result = await ai.generateText(call as unknown as Parameters<Ai["generateText"]>[0]);
  return answerOf({
    text: result.text,
    reasoningText: result.reasoningText,
    finishReason: result.finishReason,
    usage: result.totalUsage,
    response: result.response,
    content: result.content,
  });
}

/**
 * A streamed turn: the SDK's UI message chunks go to the run's stream as they come (text and
 * reasoning part ids prefixed with the turn, `start` and `finish` left to the reader), the
 * `finish-step` held back until the approvals are known.
 */
async function streamedTurn(
  ai: Ai,
  host: StepHost,
  request: TurnRequest,
  call: Record<string, unknown>,
  abortSignal: AbortSignal,
): Promise<Answer> {
  const out = host.stream(request.stepId);
  for (const chunk of request.leadingChunks) out.write(chunk);
  let failure: unknown;
  const result = ai.streamText({ ...call, onError: () => {} } as unknown as Parameters<Ai["streamText"]>[0]);
  let finishStep: unknown;
  const chunks = result.toUIMessageStream({
    sendStart: false,
    sendFinish: false,
    onError: (error) => {
      failure ??= error;
      return error instanceof Error ? error.message : String(error);
    },
  });
  for await (const chunk of chunks) {
    if (chunk.type === "error") continue;
    if (chunk.type === "abort")
      failure ??= abortSignal.reason ?? new Error(`${request.stepId}: the model call was aborted`);
    else if (chunk.type === "finish-step") finishStep = chunk;
    else out.write("id" in chunk && isPartChunk(chunk.type) ? { ...chunk, id: request.partPrefix + chunk.id } : chunk);
  }
  if (failure !== undefined) throw failure;
  const [text, reasoningText, finishReason, usage, response, content] = await Promise.all([
    result.text,
    result.reasoningText,
    result.finishReason,
    result.totalUsage,
    result.response,
    result.content,
  ]);
  return { ...answerOf({ text, reasoningText, finishReason, usage, response, content }), finishStep };
}

const isPartChunk = (type: string) => type.startsWith("text-") || type.startsWith("reasoning-");

/** What a turn keeps of the SDK's result, in one shape for the plain and the streamed call. */
function answerOf(result: {
  text: string;
  reasoningText: string | undefined;
  finishReason: string;
  usage: LanguageModelUsage | undefined;
  response: { id?: string; modelId?: string; messages: ModelMessage[] };
  content: readonly { type: string; [key: string]: any }[];
}): Answer {
  const toolCalls: AgentToolCall[] = [];
  for (const part of result.content) {
    if (part.type === "tool-call") {
      toolCalls.push({
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: part.input ?? null,
        ...(part.invalid ? { error: messageOf(part.error) } : {}),
      });
    }
  }
  return {
    text: result.text,
    ...(result.reasoningText ? { reasoningText: result.reasoningText } : {}),
    finishReason: result.finishReason,
    usage: usageOf(result.usage),
    response: compact({ id: result.response.id, modelId: result.response.modelId }),
    messages: result.response.messages,
    toolCalls,
  };
}

/** The tools as the model is told of them: no `execute` (the agent runs each call as a step), no approval. */
function schemasOnly(tools: ToolSet): ToolSet {
  const out: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    const { execute: _execute, needsApproval: _needsApproval, ...schema } = tool as Record<string, unknown>;
    out[name] = schema as ToolSet[string];
  }
  return out;
}

async function needsApproval(request: TurnRequest, call: AgentToolCall): Promise<boolean> {
  const tool = Object.hasOwn(request.tools, call.toolName) ? request.tools[call.toolName] : undefined;
  const rule = tool?.needsApproval;
  if (typeof rule !== "function") return rule === true;
  return Boolean(await rule(call.input as never, { toolCallId: call.toolCallId, messages: request.messages }));
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
