import { RunNotFoundError, RunStateConflictError } from "../errors";
import { storableName } from "../names";
import { type ChatTurnRecord, type DurableDb, readChatTurn, setChatTurn } from "../store";
import type { AnyWorkflow } from "../types";
import { type ChatTurnRequest, chatTurnId, parseChatTurnInput } from "./chat-input";
import { payloadCodecOf } from "../engine/payloads";
import type { Durable } from "../engine/durable-api";

// A chat's turns (docs/guide/chat.md): a turn is a run of the app's chat workflow, started by id,
// and the chat remembers which run is its active turn (durable_chats, migration 0009), so a page
// that reloads finds the answer by the chat id alone. These take the app's `Durable`, as the chat
// routes (http/chat.ts) and a server component that renders a chat do.

export type { ChatTurnRecord };

const dbOf = (durable: Durable) => durable.db as unknown as DurableDb;

/** What `startChatTurn` answers: the turn's run, and whether this call created it. */
export interface ChatTurnStart {
  runId: string;
  created: boolean;
  statusToken: string;
}

/**
 * Starts the turn that answers the input's last user message (a run of `workflow`, id from
 * `chatTurnId`: the same request twice starts one run), then records it as the chat's active turn.
 * Started first, recorded second: a crash between the two leaves a run that the next POST of the
 * same turn finds by its id and records.
 * @throws InvalidInputError for input that is not `{ chatId, messages }` or has no user message
 * @throws RunStateConflictError when the turn's run exists with other messages
 */
export async function startChatTurn(
  durable: Durable,
  workflow: AnyWorkflow,
  input: unknown,
  request: ChatTurnRequest = {},
): Promise<ChatTurnStart> {
  const turn = parseChatTurnInput(input);
  const runId = chatTurnId(turn, request);
  const started = await durable.start(workflow, turn as never, { id: runId });
  await setChatTurn(dbOf(durable), turn.chatId, runId);
  return { runId, created: started.created, statusToken: started.statusToken };
}

/**
 * The chat's active turn (its run id, status and input); null when the chat has none. The input (the
 * chat's messages) is opened when it was stored sealed (docs/guide/encryption.md).
 * @throws DecryptionError when the messages are sealed under a key the instance does not have
 */
export async function readActiveChatTurn(durable: Durable, chatId: string): Promise<ChatTurnRecord | null> {
  const turn = await readChatTurn(dbOf(durable), storableName(chatId, "a chat id"));
  return turn && { ...turn, input: await payloadCodecOf(durable).open(turn.input) };
}

/**
 * Cancels the chat's active turn (its run ends `cancelled`, its stream kept; its step's
 * `abortSignal` fires at the step's next write or heartbeat). False when the chat has no active
 * turn or it already ended.
 */
export async function cancelChatTurn(durable: Durable, chatId: string, reason = "stopped"): Promise<boolean> {
  const turn = await readActiveChatTurn(durable, chatId);
  if (!turn || isTerminalTurn(turn)) return false;
  try {
    await durable.cancel(turn.runId, { reason });
    return true;
  } catch (e) {
    // Ended (or gone) between the read and the cancel: nothing was left to stop.
    if (RunStateConflictError.is(e) || RunNotFoundError.is(e)) return false;
    throw e;
  }
}

export function isTerminalTurn(turn: { status: string }): boolean {
  return turn.status === "completed" || turn.status === "failed" || turn.status === "cancelled";
}
