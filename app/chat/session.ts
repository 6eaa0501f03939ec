import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { MissingSecretError } from "@/lib/durable";

// Who may read and write a chat of the demo (docs/guide/chat.md, "The demo"): the browser that
// made it. /chat/new gives the browser a session cookie (random, httpOnly) and a chat id whose
// last part is an HMAC of the session and the id's random part under the app's secret, so the
// routes check ownership without a table: a chat id from another browser, or one made up, is
// refused (404, nothing read). A real app asks its own session instead.

export const SESSION_COOKIE = "demo_chat_session";
const SESSION = /^[A-Za-z0-9_-]{22}$/;
const CHAT_ID = /^chat-([A-Za-z0-9_-]{12})-([A-Za-z0-9_-]{22})$/;

function secret(): string {
  const value = process.env.DURABLE_SECRET;
  if (value) return value;
  // The routes answer it as they answer any secret missing in production: 503, logged once.
  if (process.env.NODE_ENV === "production") throw new MissingSecretError("durable");
  return "dev-durable-secret";
}

const macOf = (session: string, nonce: string) =>
  createHmac("sha256", secret()).update(`demo-chat\u0000${session}\u0000${nonce}`).digest("base64url").slice(0, 22);

export const newSession = () => randomBytes(16).toString("base64url");

export const isSession = (value: string | undefined): value is string => !!value && SESSION.test(value);

/** A new chat id that only `session` owns. */
export function newChatId(session: string): string {
  const nonce = randomBytes(9).toString("base64url");
  return `chat-${nonce}-${macOf(session, nonce)}`;
}

/** Whether `chatId` was made for `session` (constant time in the MAC). */
export function ownsChat(session: string | undefined, chatId: string): boolean {
  const match = CHAT_ID.exec(chatId);
  if (!match || !isSession(session)) return false;
  const expected = Buffer.from(macOf(session, match[1]!));
  const given = Buffer.from(match[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The session cookie's value in a request's Cookie header. */
export function sessionOfRequest(request: Request): string | undefined {
  for (const pair of (request.headers.get("cookie") ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at !== -1 && pair.slice(0, at).trim() === SESSION_COOKIE) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** The chat routes' `authorize`: the request carries the session cookie that owns the chat. */
export const authorizeChat = (request: Request, chatId: string) => ownsChat(sessionOfRequest(request), chatId);
