// How the mock model (app/mock-providers/model.ts) delivers a chat answer: as server-sent chunks or
// one JSON body, each piece after a delay, cut halfway when the model's name asks for it.
import type { PlannedCall } from "./mock-tools";

/** What the mock answers a chat request, before it is put in the shape of a stream or a body. */
export interface Answer {
  id: string;
  created: number;
  model: string;
  calls: PlannedCall[];
  pieces: string[];
  finishReason: string;
  reasoning: string | undefined;
  usage: Record<string, unknown>;
}

/** How the answer is delivered: cut halfway or not, each piece after a delay, until the client goes away. */
export interface Timing {
  cut: boolean;
  delayMs: number;
  signal: AbortSignal;
}

/** The answer as server-sent chunks, pulled one at a time. */
export function streamed(answer: Answer, includeUsage: boolean, { cut, delayMs, signal }: Timing): Response {
  const { id, created, model, calls, pieces, finishReason, reasoning, usage } = answer;
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

/** The answer as one JSON body, sent after the delay of all its pieces. */
export async function plain(answer: Answer, { cut, delayMs, signal }: Timing): Promise<Response> {
  const { id, created, model, calls, pieces, finishReason, reasoning, usage } = answer;
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

/** The text in pieces of `size` characters (one empty piece for no text). */
export function splitEvery(text: string, size: number): string[] {
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
