"use server";
// The chat page's actions: which tool calls wait for approval, and a person's answer to one. Like
// the chat routes they ask the session cookie first (app/chat/session.ts): only the browser that
// owns the chat may see or answer its calls, and only calls its active turn waits on.
import { cookies } from "next/headers";
import { after } from "next/server";
import { readActiveChatTurn, TOOL_APPROVAL_SIGNAL, toolApprovals } from "@/lib/durable/ai";
import { getDurable } from "../durable";
import { ownsChat, SESSION_COOKIE } from "./session";

export interface ChatApprovalResult {
  ok: boolean;
  message: string;
}

/** The calls the chat's active turn waits on (`toolApprovals`); [] for a chat not this browser's. */
export async function pendingChatApprovals(chatId: string): Promise<string[]> {
  if (typeof chatId !== "string") return [];
  const session = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!ownsChat(session, chatId)) return [];
  return pendingOf(chatId);
}

/** The tool call ids the chat's active turn waits on (not exported: every export here is an endpoint). */
async function pendingOf(chatId: string): Promise<string[]> {
  const durable = await getDurable();
  const turn = await readActiveChatTurn(durable, chatId);
  if (turn?.status !== "waiting") return [];
  return (await toolApprovals(durable, turn.runId)).map((call) => call.toolCallId);
}

/** Sends signal `tool-approval` for `toolCallId` of the chat's active turn, then advances the run. */
export async function answerChatToolCall(
  chatId: string,
  toolCallId: string,
  approved: boolean,
): Promise<ChatApprovalResult> {
  if (typeof chatId !== "string" || typeof toolCallId !== "string" || typeof approved !== "boolean") {
    return { ok: false, message: "not an answer to a tool call" };
  }
  const session = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!ownsChat(session, chatId)) return { ok: false, message: "no such chat" };
  const durable = await getDurable();
  const turn = await readActiveChatTurn(durable, chatId);
  const pending = turn ? await toolApprovals(durable, turn.runId) : [];
  const call = turn ? pending.find((c) => c.toolCallId === toolCallId) : undefined;
  if (!turn || !call) {
    return { ok: false, message: "that call no longer waits for an answer" };
  }
  // The delivery id makes a second click a repeat rather than a second answer; the turn is in it
  // and in the payload, since a model may use a call id again in a later turn (docs/guide/agents.md).
  const { turnId } = call;
  await durable.signal({
    runId: turn.runId,
    name: TOOL_APPROVAL_SIGNAL,
    payload: approved
      ? { toolCallId, approved, turnId }
      : { toolCallId, approved, turnId, reason: "the customer declined" },
    id: `chat-approval-${turnId}/${toolCallId}`.slice(0, 255),
  });
  after(async () => {
    try {
      await durable.advance(turn.runId, { budgetMs: 50_000 });
    } catch (e) {
      console.warn(`[chat] advancing ${turn.runId} failed: ${(e as Error)?.stack ?? e}`);
    }
  });
  return { ok: true, message: approved ? "Approved." : "Declined." };
}
