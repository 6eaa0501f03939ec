import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** A chat's active turn as `readChatTurn` answers it: the run, its status and its input. */
export interface ChatTurnRecord {
  chatId: string;
  runId: string;
  /** When the turn became the chat's active one. */
  updatedAt: Date;
  status: "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled";
  input: unknown;
}

/**
 * Makes run `runId` the chat's active turn (insert, or replace the one recorded): one statement.
 * The last call wins; a repeat of the same pair only moves `updated_at`.
 */
export async function setChatTurn(db: DurableDb, chatId: string, runId: string): Promise<void> {
  await db
    .insertInto("durable_chats")
    .values({ chat_id: chatId, run_id: runId })
    .onConflict((oc) =>
      oc
        .column("chat_id")
        .doUpdateSet((eb) => ({ run_id: eb.ref("excluded.run_id"), updated_at: sql<Date>`durable_now()` })),
    )
    .execute();
}

/** The chat's active turn with its run's status and input, in one round trip; null when it has none. */
export async function readChatTurn(db: DurableDb, chatId: string): Promise<ChatTurnRecord | null> {
  const row = await db
    .selectFrom("durable_chats as c")
    .innerJoin("durable_runs as r", "r.id", "c.run_id")
    .select(["c.chat_id", "c.run_id", "c.updated_at", "r.status", "r.input"])
    .where("c.chat_id", "=", chatId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    chatId: row.chat_id,
    runId: row.run_id,
    updatedAt: new Date(row.updated_at),
    status: row.status,
    input: row.input,
  };
}
