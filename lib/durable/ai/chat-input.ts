import { createHash } from "node:crypto";
import type { UIMessage } from "ai";
import * as z from "zod";
import { InvalidInputError } from "../errors";
import { isStorableName, NAME_RULE } from "../names";

// A chat turn's input and its run id (docs/guide/chat.md, "A chat turn is a run"): what the
// AI SDK's useChat sends, checked loosely (the parts are the SDK's business, not ours), and an id
// that the same request always derives, so a POST sent twice starts one run.

/** An AI SDK `UIMessage`, loosely: an id, a role, parts that each have a type, optional metadata. */
export const uiMessageSchema = z.object({
  id: z.string().min(1),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(z.looseObject({ type: z.string() })),
  metadata: z.unknown().optional(),
}) as unknown as z.ZodType<UIMessage, UIMessage>;

/** The input of a chat turn's run: the chat's id and every message the client sent, oldest first. */
export const chatTurnInput = z.object({
  chatId: z.string().refine(isStorableName, { message: `a chat id is ${NAME_RULE}` }),
  messages: z.array(uiMessageSchema).min(1),
});

export type ChatTurnInput = z.infer<typeof chatTurnInput>;

/** How the turn came about (the AI SDK's `trigger` and `messageId`): a regenerate is a turn of its own. */
export interface ChatTurnRequest {
  trigger?: "submit-message" | "regenerate-message";
  /** For a regenerate: the id of the assistant message it replaces. */
  messageId?: string;
}

/** Checks a turn's input, as a 400 names it. */
export function parseChatTurnInput(value: unknown): ChatTurnInput {
  const parsed = chatTurnInput.safeParse(value);
  if (!parsed.success) {
    throw new InvalidInputError("the chat turn is invalid: { id, messages } as useChat sends them", {
      issues: parsed.error.issues,
    });
  }
  return parsed.data;
}

/**
 * The run id of a turn: a hash of the chat id, the last user message's id and, for a regenerate,
 * the message it replaces. A hash, not the ids joined: ids are arbitrary strings, and a joined id
 * could be another chat's (chat "a:b" with message "c" against chat "a" with message "b:c").
 * @throws InvalidInputError when no message is the user's
 */
export function chatTurnId(input: ChatTurnInput, request: ChatTurnRequest = {}): string {
  const user = [...input.messages].reverse().find((message) => message.role === "user");
  if (!user) throw new InvalidInputError("a chat turn answers a user message: the messages hold none");
  const regenerate = request.trigger === "regenerate-message" ? ["regenerate", request.messageId ?? ""] : [];
  const hash = createHash("sha256")
    .update(JSON.stringify([input.chatId, user.id, ...regenerate]))
    .digest("base64url");
  return `chat-turn-${hash}`;
}
