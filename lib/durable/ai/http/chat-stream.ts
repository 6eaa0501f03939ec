import type { Durable } from "../../engine/create-durable";
import { turnEndOfRun, uiChunkOf } from "../load-chat";
import { terminalStatuses } from "../../schemas";
import { TURN_END_PART, type TurnEnd } from "../turn-end";
import {
  type EventFormat,
  type RunEventStreamOptions,
  runEventStream,
  SSE_HEADERS,
  type StreamRead,
} from "../../http/sse";

// A chat turn's run stream as the AI SDK's UI message stream (docs/guide/chat.md, "The stream"):
// the same polling as the run stream route (./sse.ts), in the format useChat reads: `data:
// <UIMessageChunk>` events, each with `id: <seq>` so a reader resumes with Last-Event-ID; `start`
// first when read from the beginning; `finish` once the run is terminal or parked on a signal,
// after the turn's end (../turn-end.ts) and for a failed run `error` when it did not complete; then
// `[DONE]`.

/** The headers of a UI message stream response. */
export const UI_STREAM_HEADERS = { ...SSE_HEADERS, "x-vercel-ai-ui-message-stream": "v1" };

const TERMINAL: ReadonlySet<string> = new Set(terminalStatuses);
/** Waits that nothing but a person or a third party ends: the answer is finished for now. */
const PARKED: ReadonlySet<string> = new Set(["signal", "any", "callback"]);
/** A waiting run's status is read at most this often to tell a parked run from a sleeping one. */
const PARKED_CHECK_MS = 1000;

const data = (value: unknown, id?: number) =>
  `${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(value)}\n\n`;

/** The run stream route's options (./sse.ts), less what the chat decides: the read and the format. */
export type ChatStreamOptions = Omit<RunEventStreamOptions, "read" | "after" | "format"> & {
  durable: Durable;
  runId: string;
  /** The seq the reader has; null: from the beginning, with `start`. */
  after: number | null;
};

/** The body of a chat route's answer: the turn's UI message stream, from `after` on. */
export function chatEventStream(options: ChatStreamOptions): ReadableStream<Uint8Array> {
  const { durable, runId, after, ...polling } = options;
  return runEventStream({
    ...polling,
    read: (from) => durable.readStream(runId, { after: from, limit: options.batch }),
    after: after ?? 0,
    format: chatFormat(durable, runId, after === null),
  });
}

function chatFormat(durable: Durable, runId: string, fromStart: boolean): EventFormat {
  let checkedAt = Number.NEGATIVE_INFINITY;
  const ending = async (read: StreamRead): Promise<string | null> => {
    if (TERMINAL.has(read.status)) return closing(await turnEndOfRun(durable, runId, read.status));
    if (read.status !== "waiting" || Date.now() - checkedAt < PARKED_CHECK_MS) return null;
    checkedAt = Date.now();
    // Parked: waiting on a signal that has not come. A delivery makes the run due before a claim
    // takes the wait off it, and that run is about to go on: keep reading.
    const now = await durable.inspect(runId);
    if (!now || now.due || now.status.status !== "waiting") return null; // the next read says how
    return PARKED.has(now.status.waitingFor?.kind ?? "") ? closing() : null;
  };
  return {
    // The first bytes go out at once: the `start` event when read from the beginning, else a comment.
    open: fromStart ? data({ type: "start", messageId: runId }, 0) : ": open\n\n",
    chunk: (chunk) => {
      const ui = uiChunkOf(chunk);
      return ui ? data(ui, chunk.seq) : "";
    },
    end: ending,
  };
}

/**
 * The end of the answer: for a turn that did not complete, the part that says how it ended, then
 * for a failed one `error` (the part first: a reader stops at `error`); `finish`; `[DONE]`.
 */
function closing(end: TurnEnd | null = null): string {
  const mark = end ? data({ type: TURN_END_PART, data: end }) : "";
  const error = end?.status === "failed" ? data({ type: "error", errorText: end.reason }) : "";
  return `${mark}${error}${data({ type: "finish" })}data: [DONE]\n\n`;
}
