import { createHash } from "node:crypto";
import type { TranscriptionModel } from "ai";
import { answerFor, questionsFor } from "./mock-answers";
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

type JsonSchema = Record<string, any>;

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
    const reasoning = !flags.has("reason")
      ? undefined
      : echoes
        ? `Thinking about: ${prompt}`
        : "Reading the question first, then answering it in a few plain sentences.";
    const usage = {
      prompt_tokens: messages.reduce((n, m) => n + words(textOf(m.content)).length, 0),
      completion_tokens: pieces.length + calls.length * 4 + (reasoning ? words(reasoning).length : 0),
      total_tokens: 0,
      ...(reasoning ? { completion_tokens_details: { reasoning_tokens: words(reasoning).length } } : {}),
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const id = `mock-${++responses}`;
    const created = Math.floor(Date.now() / 1000);
    const signal = request.signal;

    if (body.stream === true) {
      const includeUsage = body.stream_options?.include_usage === true;
      const base = { id, object: "chat.completion.chunk", created, model };
      const events: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }];
      if (reasoning) events.push({ ...base, choices: [{ index: 0, delta: { reasoning_content: reasoning } }] });
      for (const piece of pieces) events.push({ ...base, choices: [{ index: 0, delta: { content: piece } }] });
      for (const delta of toolCallDeltas(calls)) events.push({ ...base, choices: [{ index: 0, delta }] });
      events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finishReason }] });
      if (includeUsage) events.push({ ...base, choices: [], usage });
      const cutAt = cut ? Math.max(1, Math.floor(events.length / 2)) : Number.POSITIVE_INFINITY;
      const encoder = new TextEncoder();
      let next = 0;
      // Pulled one event at a time, so a cut errors the body only once what came before was read.
      return new Response(
        new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (next >= cutAt) return controller.error(new Error("mock-model: the stream was cut halfway"));
            if (next === events.length) {
              controller.enqueue(encoder.encode("data: [DONE]\n\n"));
              return controller.close();
            }
            if (next > 0 && delayMs > 0) {
              try {
                await sleep(delayMs, signal);
              } catch (error) {
                return controller.error(error); // the client went away
              }
            }
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(events[next++])}\n\n`));
          },
        }),
        { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
      );
    }

    if (delayMs > 0) await sleep(delayMs * Math.max(pieces.length, calls.length), signal);
    const message = {
      role: "assistant",
      content: calls.length > 0 ? null : pieces.join(""),
      ...(reasoning ? { reasoning_content: reasoning } : {}),
      ...(calls.length > 0
        ? {
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    };
    const text = JSON.stringify({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: finishReason }],
      usage,
    });
    if (!cut) return new Response(text, { headers: { "content-type": "application/json" } });
    const half = new TextEncoder().encode(text.slice(0, Math.floor(text.length / 2)));
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(half);
        },
        pull(controller) {
          // Called once the first half was read: then the connection drops.
          controller.error(new Error("mock-model: the answer was cut halfway"));
        },
      }),
      { headers: { "content-type": "application/json" } },
    );
  }

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

  return {
    handle,
    requests: () => Object.fromEntries(counts),
    reset() {
      counts = new Map();
      cutPrompts = new Set();
    },
  };
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
const words = (text: string) => text.split(/\s+/).filter((w) => w.length > 0);

/** The answer, one word per piece, each but the last followed by its space. */
function echo(prompt: string): string[] {
  const all = ["Echo:", ...words(prompt)];
  return all.map((w, i) => (i < all.length - 1 ? `${w} ` : w));
}

/**
 * The streamed `delta.tool_calls` of the calls: a first chunk per call with its id, name and no
 * arguments yet, then its arguments 16 characters a chunk, as OpenAI streams them.
 */
function toolCallDeltas(calls: PlannedCall[]): unknown[] {
  return calls.flatMap((call, index) => [
    { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] },
    ...splitEvery(call.arguments, 16).map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] })),
  ]);
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

function splitEvery(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** A number in [0, 1) from the seed and the path in the object: the same inputs, the same number. */
function unit(seed: string, path: string): number {
  return createHash("sha256").update(`${seed}\u0000${path}`).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * A value valid for the JSON schema (the subset zod and the AI SDK emit: objects, arrays, strings
 * with formats and lengths, numbers with bounds, enums, consts, anyOf, $ref), derived from the prompt.
 * Unless `echoes`, a list of strings whose name ends in "questions" holds three (or as many as the
 * schema allows) sub-questions of the prompt's question, and any other string a sentence of the
 * answer to the prompt.
 */
function objectFor(root: JsonSchema, prompt: string, echoes: boolean): unknown {
  const snippet = words(prompt).slice(0, 6).join(" ") || "nothing";
  const resolve = (schema: JsonSchema): JsonSchema => {
    if (typeof schema.$ref !== "string") return schema;
    const parts = schema.$ref.replace(/^#\//, "").split("/");
    return resolve(parts.reduce((node: any, key: string) => node?.[key], root) ?? {});
  };
  const valueFor = (raw: JsonSchema, path: string, depth: number): unknown => {
    const schema = resolve(raw);
    if ("const" in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) {
      return schema.enum[Math.floor(unit(prompt, path) * schema.enum.length)];
    }
    const options = schema.anyOf ?? schema.oneOf;
    if (Array.isArray(options) && options.length > 0) {
      const usable = options.filter((o: JsonSchema) => resolve(o).type !== "null");
      return valueFor(usable[0] ?? options[0], path, depth);
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return valueFor(schema.allOf[0], path, depth);
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const type = types.find((t: unknown) => t !== "null") ?? (schema.properties ? "object" : types[0]);
    switch (type) {
      case "object": {
        const out: Record<string, unknown> = {};
        for (const [key, child] of Object.entries(schema.properties ?? {})) {
          out[key] = valueFor(child as JsonSchema, `${path}.${key}`, depth + 1);
        }
        return out;
      }
      case "array": {
        const min = typeof schema.minItems === "number" ? schema.minItems : 1;
        const max = typeof schema.maxItems === "number" ? schema.maxItems : Math.max(min, 2);
        const items = Array.isArray(schema.prefixItems) ? schema.prefixItems : null;
        if (!echoes && !items && /questions$/i.test(path) && resolve(schema.items ?? {}).type === "string") {
          return questionsFor(prompt, Math.min(max, Math.max(min, 3)));
        }
        const length = depth > 8 ? min : Math.min(max, Math.max(min, 2));
        return Array.from({ length: items ? items.length : length }, (_, i) =>
          valueFor(items ? items[i] : (schema.items ?? {}), `${path}[${i}]`, depth + 1),
        );
      }
      case "string":
        return stringFor(schema, path);
      case "integer":
      case "number": {
        const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
        const high =
          schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : low + 100);
        const value = low + unit(prompt, path) * Math.max(0, high - low);
        return type === "integer" ? Math.min(Math.ceil(value), Math.floor(high)) : Math.round(value * 100) / 100;
      }
      case "boolean":
        return unit(prompt, path) < 0.5;
      case "null":
        return null;
      default:
        return snippet;
    }
  };
  const stringFor = (schema: JsonSchema, path: string): string => {
    switch (schema.format) {
      case "email":
        return "someone@example.com";
      case "date-time":
        return "2026-01-01T00:00:00.000Z";
      case "date":
        return "2026-01-01";
      case "time":
        return "00:00:00";
      case "uuid": {
        const hex = createHash("sha256").update(`${prompt}\u0000${path}`).digest("hex");
        const part = (from: number, to: number) => hex.slice(from, to);
        return `${part(0, 8)}-${part(8, 12)}-4${part(13, 16)}-8${part(17, 20)}-${part(20, 32)}`;
      }
      case "uri":
      case "url":
        return "https://example.com/mock";
    }
    // In prose, a string is a sentence of the answer to the prompt (the n-th for the n-th item of a
    // list). Echoing, an item of a list reads as a part of what the prompt ends with ("Part 2: …
    // from the top?"), and any other string as its key and the prompt's first words.
    const item = /\[(\d+)\]$/.exec(path);
    const key = path.split(/[.[]/).pop() || "value";
    let text: string;
    if (!echoes) {
      const sentences = answerFor(prompt).split(/(?<=\.)\s+/);
      text = sentences[(item ? Number(item[1]) : 0) % sentences.length] ?? "";
    } else {
      text = item
        ? `Part ${Number(item[1]) + 1}: ${words(prompt).slice(-7).join(" ") || "nothing"}`
        : `${key}: ${snippet}`;
    }
    if (typeof schema.maxLength === "number") text = text.slice(0, schema.maxLength);
    if (typeof schema.minLength === "number") text = text.padEnd(schema.minLength, ".");
    return text;
  };
  return valueFor(root, "$", 0);
}
