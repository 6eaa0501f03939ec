import type { UIMessage } from "ai";

// How a chat turn ended when it did not complete (docs/guide/chat.md, "A stopped or failed turn"):
// a data part at the end of the turn's assistant message. loadChat and the chat stream add it from
// the run's stored status (a cancelled or failed run), and a page adds the same when its Stop cancels
// the turn; it travels with the message into the next turn's input, so the history keeps it. The AI SDK's
// convertToModelMessages leaves data parts out: the model never reads it. Imports only a type, so
// both the server's entry (index.ts) and the browser's (react.ts) export it.

/** The `type` of the part (a data part of the AI SDK's, `data-…`, named for the toolkit). */
export const TURN_END_PART = "data-durable-turn-end";

/** How the turn ended: stopped (its run cancelled), or failed. */
export interface TurnEnd {
  status: "cancelled" | "failed";
  /** The cancel's reason (`"stopped"` for Stop) or the failure's message. */
  reason: string;
}

export interface TurnEndPart {
  type: typeof TURN_END_PART;
  data: TurnEnd;
}

const isTurnEnd = (data: unknown): data is TurnEnd =>
  typeof data === "object" &&
  data !== null &&
  ((data as TurnEnd).status === "cancelled" || (data as TurnEnd).status === "failed") &&
  typeof (data as TurnEnd).reason === "string";

/** How the message's turn ended, when its parts say so (a part of another shape is not read); else null. */
export function turnEndOf(message: Pick<UIMessage, "parts">): TurnEnd | null {
  for (const part of message.parts) {
    if (part.type !== TURN_END_PART) continue;
    const data = (part as { data?: unknown }).data;
    if (isTurnEnd(data)) return { status: data.status, reason: data.reason };
  }
  return null;
}

/** `message` with its turn's end as its last part (in place of any it had). */
export function withTurnEnd<M extends UIMessage>(message: M, end: TurnEnd): M {
  const part: TurnEndPart = { type: TURN_END_PART, data: { status: end.status, reason: end.reason } };
  const parts = message.parts.filter((p) => p.type !== TURN_END_PART);
  return { ...message, parts: [...parts, part as M["parts"][number]] };
}
