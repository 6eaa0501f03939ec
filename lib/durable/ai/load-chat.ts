import type { UIMessage, UIMessageChunk } from "ai";
import { loadAi } from "./load-ai";
import type { StreamChunk } from "../store";
import { TURN_END_PART, type TurnEnd, withTurnEnd } from "./turn-end";
import { chatTurnInput } from "./chat-input";
import { isTerminalTurn, readActiveChatTurn } from "./chat-turns";
import type { Durable } from "../engine/durable-api";

// What a chat page renders on load (docs/guide/chat.md, "Reload and resume"): the messages of
// the chat's latest turn, and that turn's answer folded from its stream the way the client would
// have folded it, so the page shows what a reader of the stream saw; a turn that was stopped or
// failed says so at the end of its answer (docs/guide/chat.md, "A stopped or failed turn").

const PAGE = 1000;
/**
 * The chunks the reader frames itself: a workflow that wrote them would end the message early, or
 * (the turn's end) say it was stopped or failed when it was not.
 */
const FRAMING = new Set(["start", "finish", "abort", "error", TURN_END_PART]);

/** A stored chunk the chat stream passes on: an unbroken object with a `type` that is not framing. */
export function uiChunkOf(chunk: StreamChunk): UIMessageChunk | null {
  if (chunk.broken) return null;
  const data = chunk.data as { type?: unknown } | null;
  if (data === null || typeof data !== "object" || Array.isArray(data) || typeof data.type !== "string") return null;
  return FRAMING.has(data.type) ? null : (data as UIMessageChunk);
}

/**
 * The chat's history: the latest turn's input messages, then its assistant message (id: the
 * turn's run id) assembled from the run's stream, broken chunks dropped. A turn whose run was
 * cancelled (Stop) or failed ends with a `TURN_END_PART` saying so (../turn-end.ts), and has an
 * assistant message for it even when it wrote nothing. While the latest turn is not finished its
 * answer is left out: the client's resume (`GET …/stream`) replays it from the beginning, and
 * showing it here too would show it twice. [] for a chat with no turn.
 */
export async function loadChat(durable: Durable, chatId: string): Promise<UIMessage[]> {
  const turn = await readActiveChatTurn(durable, chatId);
  if (!turn) return [];
  const input = chatTurnInput.safeParse(turn.input);
  const messages = input.success ? input.data.messages : [];
  if (!isTerminalTurn(turn)) return messages;
  const answer = await assembleAnswer(durable, turn.runId);
  if (!answer) return messages;
  const end = await turnEndOfRun(durable, turn.runId, turn.status);
  if (end) return [...messages, withTurnEnd(answer, end)];
  return answer.parts.length > 0 ? [...messages, answer] : messages;
}

/**
 * How a turn whose run is `status` ended, when it did not complete: cancelled (the cancel's reason)
 * or failed (its error's message), read from the run's stored status; null for any other status.
 * The chat stream (../http/chat-stream.ts) ends a reader's answer with the same.
 */
export async function turnEndOfRun(durable: Durable, runId: string, status: string): Promise<TurnEnd | null> {
  if (status !== "cancelled" && status !== "failed") return null;
  const error = (await durable.status(runId))?.error;
  return { status, reason: error?.message ?? (status === "failed" ? "the turn failed" : "cancelled") };
}

/** Folds the run's stream into one assistant message; null when the run is gone. */
async function assembleAnswer(durable: Durable, runId: string): Promise<UIMessage | null> {
  const chunks: UIMessageChunk[] = [{ type: "start", messageId: runId }];
  for (let after = 0; ; ) {
    const page = await durable.readStream(runId, { after, limit: PAGE });
    if (!page) return null;
    for (const chunk of page.chunks) {
      const ui = uiChunkOf(chunk);
      if (ui) chunks.push(ui);
      after = chunk.seq;
    }
    if (page.chunks.length < PAGE) break;
  }
  chunks.push({ type: "finish" });
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | null = null;
  // A chunk the SDK cannot apply (a delta of a part that never started) ends the fold there: the
  // answer is what came before it, as a client reading the stream would have been left with.
  const { readUIMessageStream } = await loadAi();
  const messages = readUIMessageStream<UIMessage>({ stream, onError: () => {}, terminateOnError: true });
  try {
    for await (const message of messages) last = message;
  } catch {
    // As above.
  }
  const parts = last?.parts ?? [];
  return last?.metadata === undefined
    ? { id: runId, role: "assistant", parts }
    : { id: runId, role: "assistant", metadata: last.metadata, parts };
}
