import * as z from "zod";
import type { Durable } from "../../engine/create-durable";
import { cancelChatTurn, isTerminalTurn, readActiveChatTurn, startChatTurn } from "../chat-turns";
import { isStorableName } from "../../names";
import { chatEventStream, UI_STREAM_HEADERS } from "./chat-stream";
import {
  CHAT_MAX_BODY_BYTES,
  type ChatContext,
  type ChatHandler,
  type ChatRoutes,
  type ChatRoutesOptions,
} from "./chat-types";
import { parseJson, readBody, seqOf } from "../../http/routes/request-input";
import { allowOnly, createRouteContext, HttpRefusal, json, type RouteContext } from "../../http/routes/route-context";
import type { Handler } from "../../http/routes/types";

// The chat routes (docs/guide/chat.md): POST starts a turn and answers its UI message stream;
// GET resumes the chat's active turn; DELETE stops it. Over the same route context as the durable
// routes (./route-context.ts: the budget, the work after the answer, the error mapping).

/** What useChat's DefaultChatTransport (and DurableChatTransport) POST; other fields are the app's. */
const chatRequest = z.looseObject({
  id: z.string(),
  messages: z.array(z.unknown()),
  trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
  messageId: z.string().optional(),
});

const notFound = (chatId: string) => new HttpRefusal(404, "chat_not_found", `no chat ${JSON.stringify(chatId)}`);

/**
 * The chat routes over the app's durable instance. `authorize` is required: without it this throws,
 * so an app cannot mount chats that anyone may read.
 *
 * @example
 * // app/chat.ts
 * export const chatRoutes = createChatRoutes(getDurable, { workflow: chat, authorize: ownsChat });
 * // app/api/chat/route.ts
 * export const maxDuration = 60;
 * export const { GET, POST, PUT, PATCH, DELETE } = chatRoutes.chat;
 */
export function createChatRoutes(getDurable: () => Promise<Durable>, options: ChatRoutesOptions): ChatRoutes {
  if (typeof options?.authorize !== "function") {
    throw new TypeError(
      "createChatRoutes: `authorize(request, chatId)` is required; it decides who may read and write a chat",
    );
  }
  if (!options.workflow || typeof options.workflow.name !== "string") {
    throw new TypeError("createChatRoutes: `workflow` (the app's chat workflow) is required");
  }
  const ctx = createRouteContext(getDurable, { ...options, maxBodyBytes: options.maxBodyBytes ?? CHAT_MAX_BODY_BYTES });
  return {
    chat: allowOnly<Handler>({ POST: ctx.guard((request) => postTurn(ctx, options, request)) }),
    stream: allowOnly<ChatHandler>({
      GET: ctx.guard((request, context: ChatContext) => resumeTurn(ctx, options, request, context)),
      DELETE: ctx.guard((request, context: ChatContext) => stopTurn(ctx, options, request, context)),
    }),
    idle: () => ctx.idle(),
  };
}

/** `POST /api/chat`: validate, authorize, start the turn (idempotent), answer its stream from the beginning. */
async function postTurn(ctx: RouteContext, options: ChatRoutesOptions, request: Request): Promise<Response> {
  const startedAt = Date.now();
  const parsed = chatRequest.safeParse(parseJson(await readBody(request, ctx.maxBody)));
  if (!parsed.success) {
    throw new HttpRefusal(400, "invalid_chat_request", "the body is { id, messages, trigger?, messageId? }", {
      issues: parsed.error.issues,
    });
  }
  const { id: chatId, messages, trigger, messageId } = parsed.data;
  if (!isStorableName(chatId) || !(await options.authorize(request, chatId))) throw notFound(chatId);
  const durable = await ctx.durable();
  const turn = await startTurn(durable, options, { chatId, messages }, { trigger, messageId });
  const first = await durable.readStream(turn.runId, { after: 0, limit: batchOf(ctx) });
  if (!first) throw notFound(chatId); // deleted in between: nothing to stream
  ctx.advanceAfterResponse(durable, turn.runId, startedAt);
  return streamResponse(ctx, durable, turn.runId, null, first, request, startedAt);
}

/** A bad turn (no user message, a message without an id) is the same 400 as a bad body. */
async function startTurn(
  durable: Durable,
  options: ChatRoutesOptions,
  input: { chatId: string; messages: unknown[] },
  request: Parameters<typeof startChatTurn>[3],
) {
  try {
    return await startChatTurn(durable, options.workflow, input, request);
  } catch (e) {
    const error = e as { name?: string; message?: string; issues?: unknown };
    if (error?.name !== "InvalidInputError") throw e;
    throw new HttpRefusal(400, "invalid_chat_request", error.message ?? "invalid chat turn", {
      ...(error.issues === undefined ? {} : { issues: error.issues }),
    });
  }
}

/**
 * `GET /api/chat/{chatId}/stream`: the active turn's stream, from `Last-Event-ID` (no `start`
 * then) or from the beginning. 204 when the chat has no turn, or when a reader without
 * Last-Event-ID asks for a finished one (the page rendered it from `loadChat`); a reader that was
 * cut off mid-answer still gets the rest and the `finish` of a turn that ended meanwhile.
 */
async function resumeTurn(
  ctx: RouteContext,
  options: ChatRoutesOptions,
  request: Request,
  context: ChatContext,
): Promise<Response> {
  const startedAt = Date.now();
  const chatId = await authorizedChat(options, request, context);
  const after = lastEventId(request);
  const durable = await ctx.durable();
  const turn = await readActiveChatTurn(durable, chatId);
  if (!turn || (after === null && isTerminalTurn(turn))) return new Response(null, { status: 204 });
  // The status read heals a run whose owner died mid-answer; a due run is advanced after the answer.
  const read = await durable.inspect(turn.runId);
  if (!read) return new Response(null, { status: 204 });
  if (read.due) ctx.advanceAfterResponse(durable, turn.runId, startedAt);
  const first = await durable.readStream(turn.runId, { after: after ?? 0, limit: batchOf(ctx) });
  if (!first) return new Response(null, { status: 204 });
  return streamResponse(ctx, durable, turn.runId, after, first, request, startedAt);
}

/** `DELETE /api/chat/{chatId}/stream` (the transport's `stop()`): cancel the active turn. */
async function stopTurn(
  ctx: RouteContext,
  options: ChatRoutesOptions,
  request: Request,
  context: ChatContext,
): Promise<Response> {
  const chatId = await authorizedChat(options, request, context);
  const durable = await ctx.durable();
  return json(200, { cancelled: await cancelChatTurn(durable, chatId) });
}

async function authorizedChat(options: ChatRoutesOptions, request: Request, context: ChatContext): Promise<string> {
  const { chatId } = await context.params;
  if (!isStorableName(chatId) || !(await options.authorize(request, chatId))) throw notFound(String(chatId));
  return chatId;
}

/** The seq a reconnecting reader has (`Last-Event-ID`), or null: from the beginning. A whole number or 400. */
function lastEventId(request: Request): number | null {
  const header = request.headers.get("last-event-id");
  return header === null || header === "" ? null : seqOf(header, "Last-Event-ID");
}

const batchOf = (ctx: RouteContext) => ctx.options.stream?.batch ?? 200;

function streamResponse(
  ctx: RouteContext,
  durable: Durable,
  runId: string,
  after: number | null,
  first: NonNullable<Awaited<ReturnType<Durable["readStream"]>>>,
  request: Request,
  startedAt: number,
): Response {
  const body = chatEventStream({
    durable,
    runId,
    after,
    first,
    batch: batchOf(ctx),
    pollMs: ctx.options.stream?.pollMs ?? 100,
    pingMs: ctx.options.stream?.pingMs ?? 15_000,
    // The budget the advance after the answer gets too: the reader resumes in a fresh invocation.
    stopAt: Date.now() + ctx.budgetMs(startedAt),
    signal: request.signal,
    log: ctx.log,
  });
  return new Response(body, { status: 200, headers: UI_STREAM_HEADERS });
}
