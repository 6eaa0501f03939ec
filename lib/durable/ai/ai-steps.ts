import type { FinishReason, GenerateTextResult, LanguageModelUsage, ToolSet } from "ai";
import type { z } from "zod";
import type { StepHost } from "../engine/run/step-host";
import type { AfterFlush } from "../engine/wings";
import { InvalidInputError } from "../errors";
import { resultJson } from "../steps/effect-body";
import type { Body } from "../steps/effect-steps";
import type { StepOptions } from "../types";
import type {
  AiAgentOptions,
  AiGenerateObjectOptions,
  AiGenerateTextOptions,
  AiMapOptions,
  AiObjectResult,
  AiSteps,
  AiTextResult,
  AiTranscriptionResult,
} from "./types";
import { type AgentParts, runAgent } from "./agent-step";
import { compact, usageOf } from "./ai-usage";
import { loadAi } from "./load-ai";

/** `execute` of steps/effect-steps.ts: runs a body as a step of a kind, with the effect-step rules. */
type Execute = (id: string, kind: "ai", body: Body, options?: StepOptions) => Promise<any>;

const DEFAULT_CONCURRENCY = 4;

/** An AiTextResult from a partial one: what a mocked AI step records (lib/durable/testing.ts). */
export function completeAiTextResult(partial: Partial<AiTextResult> = {}): AiTextResult {
  return {
    text: partial.text ?? "",
    finishReason: partial.finishReason ?? "stop",
    usage: partial.usage ?? {},
    response: partial.response ?? {},
    ...(partial.reasoningText !== undefined ? { reasoningText: partial.reasoningText } : {}),
  };
}

/**
 * `ctx.step.ai`: model calls as steps of kind `ai`, executed by the effect-step rules (retries,
 * lease, timeout, heartbeat, reclaims). A receipt stores what a replay needs, never the SDK's object
 * (docs/model.md, "Run streams", for what `streamText` appends).
 */
export function createAiSteps(host: StepHost, parts: AgentParts, afterFlush: AfterFlush) {
  const { execute } = parts;
  const generateText = (id: string, options: AiGenerateTextOptions, stepOptions?: StepOptions) =>
    execute(id, "ai", generateTextBody(host, id, options), stepOptions) as Promise<AiTextResult>;
  const steps = {
    generateText: afterFlush(generateText),
    generateObject: afterFlush(
      <TSchema extends z.ZodType>(id: string, options: AiGenerateObjectOptions<TSchema>, stepOptions?: StepOptions) =>
        generateObject(host, execute, id, options, stepOptions),
    ) as AiSteps["generateObject"],
    streamText: afterFlush(
      (id: string, options: Parameters<AiSteps["streamText"]>[1], stepOptions?: StepOptions) =>
        execute(id, "ai", streamTextBody(host, id, options), stepOptions) as Promise<AiTextResult>,
    ),
    transcribe: afterFlush(
      (id: string, options: Parameters<AiSteps["transcribe"]>[1], stepOptions?: StepOptions) =>
        execute(id, "ai", transcribeBody(host, id, options), stepOptions) as Promise<AiTranscriptionResult>,
    ),
  };
  const map = <TItem>(
    id: string,
    items: readonly TItem[],
    options: (item: TItem, index: number) => AiGenerateTextOptions,
    mapOptions?: AiMapOptions,
  ) => mapItems(steps.generateText, id, items, options, mapOptions);
  // Not flushed-after itself: each of its turns and tool calls is (the parts are).
  const agent = (id: string, options: AiAgentOptions) => runAgent(host, parts, id, options);
  return { ...steps, map, agent } satisfies AiSteps;
}

/** The body of `generateText`: one call, its result stored as a replay answers it. */
function generateTextBody(host: StepHost, id: string, options: AiGenerateTextOptions): Body {
  return async (s) => {
    const ai = await loadAi();
    const result = await ai.generateText({ ...options, abortSignal: s.abortSignal } as Parameters<
      typeof ai.generateText
    >[0]);
    return { json: resultJson(host, textResult(result), id) };
  };
}

/** `generateObject`: a text call with an object output, the stored object checked by the schema. */
async function generateObject<TSchema extends z.ZodType>(
  host: StepHost,
  execute: Execute,
  id: string,
  options: AiGenerateObjectOptions<TSchema>,
  stepOptions?: StepOptions,
): Promise<AiObjectResult<z.output<TSchema>>> {
  const { schema, schemaName, schemaDescription, ...call } = options;
  const stored: AiObjectResult<unknown> = await execute(
    id,
    "ai",
    async (s) => {
      const ai = await loadAi();
      const result = await ai.generateText({
        ...call,
        output: ai.Output.object({ schema, name: schemaName, description: schemaDescription }),
        abortSignal: s.abortSignal,
      } as Parameters<typeof ai.generateText>[0]);
      const { text: _text, ...rest } = textResult(result);
      return { json: resultJson(host, { object: result.output, ...rest }, id) };
    },
    stepOptions,
  );
  // The object as stored (after its JSON round trip) is checked on the first execution and on
  // every replay alike: a schema that changed since, or a value JSON changed, fails the same way.
  const parsed = schema.safeParse(stored.object);
  if (!parsed.success) {
    throw new InvalidInputError(
      `AI step "${id}": the stored object does not match the schema given to generateObject ` +
        `(did the schema change since it was stored?): ${parsed.error.message}`,
      { issues: parsed.error.issues },
    );
  }
  return { ...stored, object: parsed.data };
}

/** The body of `streamText`: the text deltas go to the run's stream as they come, the whole is stored. */
function streamTextBody(host: StepHost, id: string, options: Parameters<AiSteps["streamText"]>[1]): Body {
  return async (s) => {
    const ai = await loadAi();
    const out = host.stream(id);
    const result = ai.streamText({
      // The error is thrown below, into the step: the SDK need not log it too.
      onError: () => {},
      ...options,
      abortSignal: s.abortSignal,
    } as Parameters<typeof ai.streamText>[0]);
    let text = "";
    let reasoning = "";
    let finishReason: FinishReason | undefined;
    let usage: LanguageModelUsage | undefined;
    let response: { id?: string; modelId?: string } = {};
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        text += part.text;
        if (part.text.length > 0) out.write(part.text);
      } else if (part.type === "reasoning-delta") {
        reasoning += part.text;
      } else if (part.type === "finish-step") {
        response = { id: part.response.id, modelId: part.response.modelId };
      } else if (part.type === "finish") {
        finishReason = part.finishReason;
        usage = part.totalUsage;
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "abort") {
        throw s.abortSignal.reason ?? new Error(`AI step "${id}": the stream was aborted`);
      }
    }
    if (finishReason === undefined) throw new Error(`AI step "${id}": the stream ended without finishing`);
    // The stored text is what the stream carried, delta by delta: the run's stream of this
    // attempt and the receipt agree.
    const stored: AiTextResult = {
      text,
      finishReason,
      usage: usageOf(usage),
      response: compact(response),
      ...(reasoning.length > 0 ? { reasoningText: reasoning } : {}),
    };
    return { json: resultJson(host, stored, id) };
  };
}

/** The body of `transcribe`: the transcript and its segments, stored. */
function transcribeBody(host: StepHost, id: string, options: Parameters<AiSteps["transcribe"]>[1]): Body {
  return async (s) => {
    const ai = await loadAi();
    const result = await ai.experimental_transcribe({ ...options, abortSignal: s.abortSignal });
    const stored: AiTranscriptionResult = {
      text: result.text,
      segments: result.segments.map((seg) => ({
        text: seg.text,
        startSecond: seg.startSecond,
        endSecond: seg.endSecond,
      })),
      ...(result.language !== undefined ? { language: result.language } : {}),
      ...(result.durationInSeconds !== undefined ? { durationInSeconds: result.durationInSeconds } : {}),
      response: compact({ modelId: result.responses.at(-1)?.modelId }),
    };
    return { json: resultJson(host, stored, id) };
  };
}

/** `map`: a `generateText` step per item (`id/<index>`), `concurrency` at once, stopping at the first failure. */
async function mapItems<TItem>(
  generateText: (id: string, options: AiGenerateTextOptions, stepOptions?: StepOptions) => Promise<AiTextResult>,
  id: string,
  items: readonly TItem[],
  options: (item: TItem, index: number) => AiGenerateTextOptions,
  mapOptions: AiMapOptions = {},
): Promise<AiTextResult[]> {
  const { concurrency = DEFAULT_CONCURRENCY, ...stepOptions } = mapOptions;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InvalidInputError(`AI step "${id}": map's concurrency must be a whole number of at least 1`);
  }
  const results: AiTextResult[] = new Array(items.length);
  let next = 0;
  let failed = false;
  // Items are taken in index order, each reaching its step as it is taken: item i is step `id/i`
  // at the same position on every replay.
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await generateText(`${id}/${index}`, options(items[index]!, index), stepOptions);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** What a text call stores: no raw object, only what a replay answers. */
function textResult(result: GenerateTextResult<ToolSet, any>): AiTextResult {
  return {
    text: result.text,
    finishReason: result.finishReason,
    usage: usageOf(result.totalUsage),
    response: compact({ id: result.response.id, modelId: result.response.modelId }),
    ...(result.reasoningText ? { reasoningText: result.reasoningText } : {}),
  };
}
