import type { TranscriptionModel } from "ai";
import { answerFor } from "./mock-answers";
import { type Answer, plain, splitEvery, streamed } from "./mock-chat-response";
import { type JsonSchema, objectFor, words } from "./mock-object";
import {
  type ChatMessage,
  nextToolCalls,
  type PlannedCall,
  resultSentences,
  toolArguments,
  toolResults,
  toolsOf,
} from "./mock-tools";

/**
 * A mock language model that speaks enough of the OpenAI-compatible HTTP API for
 * `createOpenAICompatible({ baseURL, name })` of `@ai-sdk/openai-compatible`, so the AI steps can be
 * run, replayed and killed against something real over HTTP, with no key and no network. It is a
 * Web-standard handler: the Next route `app/api/mock-model/[...path]/route.ts` mounts it at
 * `/api/mock-model/v1/...`, and `tests/helpers/mock-model-server.ts` serves it on a node:http port.
 *
 * Endpoints (the path is matched from its `/v1/` on, so any prefix works):
 *   - `POST /v1/chat/completions`: plain or streamed (`stream: true`, server-sent `data:` chunks,
 *     a usage chunk when `stream_options.include_usage`, then `data: [DONE]`). The answer is a
 *     short answer in plain prose to the last user message (./mock-answers.ts: the same prompt,
 *     the same words), streamed one word per chunk; made with `{ echo: true }`, the mock answers
 *     `Echo: <the last user message>` instead, for tests that check each call got its own prompt.
 *     With `response_format` `json_schema` the answer is an object valid for that schema, derived
 *     from the prompt (the provider sends the schema when created with
 *     `supportsStructuredOutputs: true`; a list of strings named `…questions` holds sub-questions
 *     of the prompt's question); with `json_object` (no schema) it is `{ "text": <the answer> }`.
 *     `max_tokens` cuts the answer to that many words (finish reason `length`).
 *     Tool calls (./mock-tools.ts), so the AI SDK's tool loop can be driven: with `tools` in the
 *     request, the tools asked for are those whose name occurs in the last user message (whole name,
 *     any case), in the order they first occur there; those called already are the `tool_calls` of
 *     the assistant messages after it. The mock calls the next two asked-for tools not called yet at
 *     once (`message.tool_calls`, or streamed `delta.tool_calls`, each call's arguments split across
 *     chunks; finish reason `tool_calls`), with ids `call_<n>_<tool name>`, n counting the tool calls
 *     of the whole conversation from 1; so a prompt naming four tools takes three answers: two calls,
 *     two calls, then text. The arguments are an object valid for the tool's `parameters`, made as
 *     for `response_format`, except that a string or number property whose name ends in `id`
 *     (`orderId`) holds the prompt's first run of digits. Once no asked-for tool is left (or with
 *     `tool_choice: "none"`), the mock answers text, and after tool results (the `tool` messages
 *     since the last user message) the text has a sentence for each: ` <tool> answered <content>.`
 *     after `Echo: <prompt>`, or `The <tool> tool answered <content>.` before the prose answer. The
 *     content is what the provider sent: the tool's output as JSON text, or for a denied call
 *     (`execution-denied`) its reason, `Tool call execution denied.` when it has none.
 *   - `POST /v1/audio/transcriptions`: multipart (`file`, `model`), answered in the shape of
 *     OpenAI's `verbose_json`; the "audio" is read as UTF-8 text, and that text is the transcript.
 *     `@ai-sdk/openai-compatible` has no transcription model: `mockTranscriptionModel()` below is
 *     the client for this endpoint.
 *   - `GET /v1/models`, and `GET /v1/_stats`: `{ requests: { [path]: count }, total }`.
 *
 * How it misbehaves, chosen by words in the model name (joined by "-", in any order):
 *   - `slow`: waits before every streamed chunk (50 ms, or the `x-mock-delay-ms` header, which alone
 *     also makes a model slow); a plain answer waits that long per word before it is sent.
 *   - `cut`: closes the connection halfway through the answer, without `[DONE]` (streamed), or
 *     halfway through the JSON body (plain). `cut-once`: only the first request with this prompt is
 *     cut (`reset()` forgets which prompts were).
 *   - `reason`: the answer carries reasoning text (`reasoning_content`) and reasoning tokens.
 * So `mock-slow`, `mock-cut`, `mock-slow-cut-once`, `mock-reason`; any other name answers at once.
 *
 * The response id counts requests (`mock-1`, `mock-2`, ...): a replay that called the model again
 * would answer a new id.
 */
export interface MockModel {
  handle(request: Request): Promise<Response>;
  /** Requests received so far, by path from `/v1/` (`/v1/chat/completions`); `_stats` reads are not counted. */
  requests(): Record<string, number>;
  /** Forgets the counts and the prompts `cut-once` already cut. */
  reset(): void;
}

const DEFAULT_DELAY_MS = 50;

export interface MockModelOptions {
  /** Answer `Echo: <prompt>` (and reason `Thinking about: <prompt>`) rather than in prose. */
  echo?: boolean;
}

export function createMockModel({ echo: echoes = false }: MockModelOptions = {}): MockModel {
  let counts = new Map<string, number>();
  let responses = 0;
  let cutPrompts = new Set<string>();

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const at = url.pathname.indexOf("/v1/");
    const path = at === -1 ? url.pathname : url.pathname.slice(at);
    if (request.method === "GET" && path === "/v1/_stats") {
      return Response.json({ requests: Object.fromEntries(counts), total: sum(counts) });
    }
    counts.set(path, (counts.get(path) ?? 0) + 1);
    try {
      if (request.method === "GET" && path === "/v1/models") {
        return Response.json({ object: "list", data: [{ id: "mock", object: "model", owned_by: "durable-next" }] });
      }
      if (request.method === "POST" && path === "/v1/chat/completions") return await chat(request);
      if (request.method === "POST" && path === "/v1/audio/transcriptions") return await transcription(request);
      return apiError(404, `no mock for ${request.method} ${path}`);
    } catch (error) {
      return apiError(400, error instanceof Error ? error.message : String(error));
    }
  }

  async function chat(request: Request): Promise<Response> {
    const body = (await request.json()) as Record<string, any>;
    const model = String(body.model ?? "mock");
    const flags = new Set(model.split("-"));
    const messages: ChatMessage[] = Array.isArray(body.messages) ? body.messages : [];
    const prompt = lastUserText(messages);
    const headerDelay = Number(request.headers.get("x-mock-delay-ms") ?? Number.NaN);
    const delayMs = Number.isFinite(headerDelay) ? headerDelay : flags.has("slow") ? DEFAULT_DELAY_MS : 0;
    const cutKey = `${model}\u0000${prompt}`;
    const cut = flags.has("cut") && (!flags.has("once") || !cutPrompts.has(cutKey));
    if (cut) cutPrompts.add(cutKey);
    const { calls, pieces, finishReason } = answerOf(body, messages, prompt, echoes);
    const reasoning = !flags.has("reason")
      ? undefined
      : echoes
        ? `Thinking about: ${prompt}`
        : "Reading the question first, then answering it in a few plain sentences.";
    const answer: Answer = {
      id: `mock-${++responses}`,
      created: Math.floor(Date.now() / 1000),
      model,
      calls,
      pieces,
      finishReason,
      reasoning,
      usage: usageOf(messages, pieces, calls, reasoning),
    };
    const timing = { cut, delayMs, signal: request.signal };
    return body.stream === true
      ? streamed(answer, body.stream_options?.include_usage === true, timing)
      : plain(answer, timing);
  }

  return {
    handle,
    requests: () => Object.fromEntries(counts),
    reset() {
      counts = new Map();
      cutPrompts = new Set();
    },
  };
}

/** The tool calls to make, or the answer's pieces (prose, or a JSON object) and why it ends. */
function answerOf(body: Record<string, any>, messages: ChatMessage[], prompt: string, echoes: boolean) {
  const format = body.response_format as { type?: string; json_schema?: { schema?: JsonSchema } } | undefined;
  const calls = nextToolCalls(messages, toolsOf(body), prompt, (tool) =>
    toolArguments(tool.parameters, prompt, (schema) => objectFor(schema, prompt, echoes)),
  );
  let pieces: string[];
  let finishReason = "stop";
  if (calls.length > 0) {
    pieces = [];
    finishReason = "tool_calls";
  } else if (format?.type === "json_schema" && format.json_schema?.schema) {
    pieces = splitEvery(JSON.stringify(objectFor(format.json_schema.schema, prompt, echoes)), 16);
  } else if (format?.type === "json_object") {
    pieces = splitEvery(JSON.stringify({ text: echoes ? echo(prompt).join("") : answerFor(prompt) }), 16);
  } else {
    // After tool results (the tool messages since the last user message), a sentence for each.
    const results = resultSentences(toolResults(messages), echoes);
    pieces = echoes
      ? wordPieces(["Echo:", ...words(prompt)].join(" ") + results)
      : wordPieces(results + answerFor(prompt));
    const limit = typeof body.max_tokens === "number" ? body.max_tokens : null;
    if (limit !== null && pieces.length > limit) {
      pieces = pieces.slice(0, limit);
      finishReason = "length";
    }
  }
  return { calls, pieces, finishReason };
}

/** The tokens of the request and the answer, counted in words (and 4 per tool call). */
function usageOf(messages: ChatMessage[], pieces: string[], calls: PlannedCall[], reasoning: string | undefined) {
  const usage = {
    prompt_tokens: messages.reduce((n, m) => n + words(textOf(m.content)).length, 0),
    completion_tokens: pieces.length + calls.length * 4 + (reasoning ? words(reasoning).length : 0),
    total_tokens: 0,
    ...(reasoning ? { completion_tokens_details: { reasoning_tokens: words(reasoning).length } } : {}),
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  return usage;
}

/** `POST /v1/audio/transcriptions`: the "audio" read as UTF-8 text is the transcript. */
async function transcription(request: Request): Promise<Response> {
  const form = await request.formData();
  const file = form.get("file");
  if (!file || typeof file === "string") return apiError(400, "a multipart field `file` is required");
  const said = words(new TextDecoder().decode(await file.arrayBuffer()));
  const segments = said.map((text, i) => ({ id: i, text, start: i * 0.5, end: i * 0.5 + 0.5 }));
  return Response.json({
    task: "transcribe",
    text: said.join(" "),
    language: "english",
    duration: said.length * 0.5,
    segments,
    model: String(form.get("model") ?? "mock-whisper"),
  });
}

/** The one mock the app's route serves (`/api/mock-model/v1/...`). */
export const mockModel: MockModel = createMockModel();

/** Requests the app's mock has received, by path (`GET /api/mock-model/v1/_stats` answers the same). */
export const mockModelRequests = (): Record<string, number> => mockModel.requests();

/**
 * A transcription model for `experimental_transcribe` that posts to the mock's
 * `/v1/audio/transcriptions` (OpenAI's multipart API): `@ai-sdk/openai-compatible` has none.
 * `baseURL` is the same one given to `createOpenAICompatible` (ending in `/v1`).
 */
export function mockTranscriptionModel(baseURL: string, modelId = "mock-whisper"): Exclude<TranscriptionModel, string> {
  return {
    specificationVersion: "v3",
    provider: "mock-model.transcription",
    modelId,
    async doGenerate({ audio, mediaType, abortSignal, headers }) {
      const bytes = typeof audio === "string" ? Buffer.from(audio, "base64") : audio;
      const form = new FormData();
      form.append("file", new Blob([new Uint8Array(bytes)], { type: mediaType }), "audio");
      form.append("model", modelId);
      form.append("response_format", "verbose_json");
      const response = await fetch(`${baseURL.replace(/\/$/, "")}/audio/transcriptions`, {
        method: "POST",
        body: form,
        signal: abortSignal,
        headers: Object.fromEntries(Object.entries(headers ?? {}).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >,
      });
      if (!response.ok) throw new Error(`mock transcription: ${response.status} ${await response.text()}`);
      const body = (await response.json()) as {
        text: string;
        language?: string;
        duration?: number;
        segments?: { text: string; start: number; end: number }[];
      };
      return {
        text: body.text,
        segments: (body.segments ?? []).map((s) => ({ text: s.text, startSecond: s.start, endSecond: s.end })),
        language: body.language === "english" ? "en" : body.language,
        durationInSeconds: body.duration,
        warnings: [],
        response: { timestamp: new Date(), modelId, headers: Object.fromEntries(response.headers), body },
      };
    },
  };
}

function apiError(status: number, message: string): Response {
  return Response.json({ error: { message, type: "invalid_request_error", code: null } }, { status });
}

const sum = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

/** The answer, one word per piece, each but the last followed by its space. */
function echo(prompt: string): string[] {
  const all = ["Echo:", ...words(prompt)];
  return all.map((w, i) => (i < all.length - 1 ? `${w} ` : w));
}

/** Prose, one word per piece, each with the white space after it: the pieces join back into the text. */
function wordPieces(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [""];
}

/** The text of a message's content: a string, or the text parts of a parts array. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && typeof part === "object" && typeof part.text === "string" ? part.text : ""))
    .join(" ");
}

function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") return textOf(messages[i]!.content);
  }
  return "";
}
