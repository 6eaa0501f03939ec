import type { AnyWorkflow } from "../../types";
import type { DurableRoutesOptions, Handler, Methods } from "../../http/routes/types";

// The options and the shape of `createChatRoutes` (docs/guide/chat.md, "The routes").

/** Decides who may read or write chat `chatId`: the app's session check. */
export type ChatAuthorize = (request: Request, chatId: string) => boolean | Promise<boolean>;

export interface ChatRoutesOptions
  extends Pick<
    DurableRoutesOptions,
    "maxDuration" | "budgetMarginMs" | "waitUntil" | "getDeadline" | "log" | "stream" | "maxBodyBytes"
  > {
  /** The app's chat workflow: its input is `chatTurnInput` (`{ chatId, messages }`). */
  workflow: AnyWorkflow;
  /**
   * Required: whether the request may read and write the chat (its session owns `chatId`, say).
   * Without it the routes refuse to mount; a request it refuses is a 404 and nothing is read.
   */
  authorize: ChatAuthorize;
}

/** What Next.js passes `chat/[chatId]/stream` besides the request. */
export type ChatContext = { params: Promise<{ chatId: string }> };
export type ChatHandler = (request: Request, context: ChatContext) => Promise<Response>;

export interface ChatRoutes {
  /** POST (app/api/chat/route.ts): start the turn, answer its UI message stream. */
  chat: Methods<Handler>;
  /**
   * GET (app/api/chat/[chatId]/stream/route.ts): resume the chat's active turn, 204 when none;
   * DELETE: cancel it → 200 `{ cancelled }`.
   */
  stream: Methods<ChatHandler>;
  /** Resolves once every post-response advance started so far has settled (tests, scripts). */
  idle(): Promise<void>;
}

/** The chat POST's body cap: a chat sends its whole history (1 MiB, the default input limit). */
export const CHAT_MAX_BODY_BYTES = 1024 * 1024;
