// The wing's types: AI steps, the agent, its tool calls and approvals. `ctx.step.ai` is declared
// here, by augmenting the core's StepApi (through WingSteps): the core's types never import these.
import type { experimental_transcribe, generateText, ModelMessage, StopCondition, streamText, ToolSet } from "ai";
import type { z } from "zod";
import type { AiUsage, StepOptions } from "../types";

declare module "../types" {
  interface WingSteps {
    /** Calls to a model through the AI SDK (`ai`, loaded on first use), one receipt each. */
    ai: AiSteps;
  }
}

/**
 * What an AI text step (`ctx.step.ai.generateText`, `streamText`, each item of `map`) stores and
 * answers, first time and on replay: what a replay needs, never the SDK's raw object.
 */
export interface AiTextResult {
  text: string;
  /** "stop", "length", "content-filter", "tool-calls", "error", "other" (the SDK's finish reason). */
  finishReason: string;
  usage: AiUsage;
  /** The provider's response id and the model that answered, when it said. */
  response: { id?: string; modelId?: string };
  /** The model's reasoning text, when it gave one. */
  reasoningText?: string;
}

/** What `ctx.step.ai.generateObject` stores and answers: the object, validated again on replay. */
export interface AiObjectResult<T> extends Omit<AiTextResult, "text"> {
  object: T;
}

/** What `ctx.step.ai.transcribe` stores and answers. */
export interface AiTranscriptionResult {
  text: string;
  segments: { text: string; startSecond: number; endSecond: number }[];
  language?: string;
  durationInSeconds?: number;
  response: { modelId?: string };
}

/** `Omit` over each member of a union (the SDK's `prompt` or `messages` stays an either-or). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The AI SDK's own options of `generateText`, less `abortSignal`: the step passes its own. */
export type AiGenerateTextOptions = OmitEach<Parameters<typeof generateText>[0], "abortSignal">;
/** The AI SDK's own options of `streamText`, less `abortSignal`. */
export type AiStreamTextOptions = OmitEach<Parameters<typeof streamText>[0], "abortSignal">;
/** `generateText`'s options with a zod `schema` for the object instead of an `output` setting. */
export type AiGenerateObjectOptions<TSchema extends z.ZodType> = OmitEach<
  AiGenerateTextOptions,
  "output" | "experimental_output"
> & {
  /** What the object must be; the stored object is checked against it again on every replay. */
  schema: TSchema;
  schemaName?: string;
  schemaDescription?: string;
};
/** The AI SDK's own options of `experimental_transcribe`, less `abortSignal`. */
export type AiTranscribeOptions = Omit<Parameters<typeof experimental_transcribe>[0], "abortSignal">;

/** The step options of every item of `ctx.step.ai.map`, and how many items run at once. */
export interface AiMapOptions extends StepOptions {
  /** Items in flight at once (default 4). */
  concurrency?: number;
}

/**
 * `ctx.step.ai`: model calls as steps (retries, lease, timeout, heartbeat, onReclaim as for `run`).
 * Each stores what a replay needs (never the SDK's raw object), and a replay answers it without
 * calling the model. The step's `abortSignal` is passed to the SDK.
 */
export interface AiSteps {
  generateText(id: string, options: AiGenerateTextOptions, stepOptions?: StepOptions): Promise<AiTextResult>;
  /** The object is checked against `schema` when it is stored and again on every replay. */
  generateObject<TSchema extends z.ZodType>(
    id: string,
    options: AiGenerateObjectOptions<TSchema>,
    stepOptions?: StepOptions,
  ): Promise<AiObjectResult<z.output<TSchema>>>;
  /** Appends each text delta to the run's stream as it arrives (`ctx.stream(id)`); stores the final text. */
  streamText(id: string, options: AiStreamTextOptions, stepOptions?: StepOptions): Promise<AiTextResult>;
  /**
   * One `generateText` step per item, id `<id>/<index>`, at most `concurrency` at once; the results in
   * item order. A replay answers the items that have receipts and calls the model for the others.
   */
  map<TItem>(
    id: string,
    items: readonly TItem[],
    options: (item: TItem, index: number) => AiGenerateTextOptions,
    mapOptions?: AiMapOptions,
  ): Promise<AiTextResult[]>;
  transcribe(id: string, options: AiTranscribeOptions, stepOptions?: StepOptions): Promise<AiTranscriptionResult>;
  /**
   * The AI SDK's tool loop, durable: each model turn a step (`<id>/turn-<n>`), each tool call a
   * step (`<id>/turn-<n>/tool-<toolCallId>`, with its external key); a call whose tool `needsApproval` waits
   * for signal `tool-approval` (`ToolApproval`) with nothing running. A replay of finished turns
   * and tools calls nothing (docs/guide/agents.md).
   */
  agent(id: string, options: AiAgentOptions): Promise<AiAgentResult>;
}

/** `ctx.step.ai.agent`'s options: the SDK's call settings, the tools, and how the loop stops. */
export type AiAgentOptions = Omit<
  AiGenerateTextOptions,
  "tools" | "stopWhen" | "prompt" | "messages" | "output" | "experimental_output" | "prepareStep" | "onStepFinish"
> & {
  /** AI SDK `tool()` definitions, unchanged (or `txTool` for a database write). */
  tools?: ToolSet;
  prompt?: string | ModelMessage[];
  messages?: ModelMessage[];
  /** The most model turns (default 10). */
  maxSteps?: number;
  /** The SDK's stop conditions (`stepCountIs`, `hasToolCall`, your own), checked after each turn. */
  stopWhen?: StopCondition<any> | StopCondition<any>[];
  /** Writes each turn's UI message chunks to the run's stream (what a chat reads). */
  stream?: boolean;
  /** Step options of each turn (lease, retries, timeout). */
  turnOptions?: StepOptions;
  /** Step options of each tool call; after its `retries` a tool's error is told to the model. */
  toolOptions?: StepOptions;
};

/** A tool call a turn asked for; `error` when the tool is unknown or the input does not fit it. */
export interface AgentToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  error?: string;
}

/** The answer to a tool call, as the model is told it. */
export type AgentToolResult = { toolCallId: string; toolName: string } & (
  | { output: unknown }
  | { error: string }
  | { denied: true; reason?: string }
);

/** One turn of the loop: what the model said and asked for, and the answers to its calls. */
export interface AiAgentStep {
  text: string;
  reasoningText?: string;
  toolCalls: AgentToolCall[];
  toolResults: AgentToolResult[];
  finishReason: string;
  usage: AiUsage;
  response: { id?: string; modelId?: string };
}

/** What `ctx.step.ai.agent` returns: the last turn's text, the messages it added, every turn. */
export interface AiAgentResult {
  text: string;
  /** The assistant and tool messages the loop added, in order (append them to continue the chat). */
  messages: ModelMessage[];
  steps: AiAgentStep[];
  /** Summed over the turns. */
  usage: AiUsage;
  finishReason: string;
}

/** The payload of signal `tool-approval`: the answer to a call that waits for approval. */
export interface ToolApproval {
  toolCallId: string;
  approved: boolean;
  reason?: string;
  /**
   * The turn that asked (`turnId` of `toolApprovals(durable, runId)`): only that turn's wait takes it. A
   * model may use a call id again in a later turn; without it, the oldest delivery naming the call
   * answers whichever turn waits on it next.
   */
  turnId?: string;
  /** Who decided, when `durable.decide()` delivered it (docs/guide/approvals.md, "Tool approvals"). */
  actor?: string;
}

/** What an agent's tool call is told of its step (`options.experimental_context` of `execute`). */
export interface AgentToolStep {
  stepId: string;
  /** The call's idempotency key: the same in every attempt and replay. */
  externalKey: string;
  attempt: number;
  isReclaim: boolean;
}
