// A chat's active turn on the real server (migration 0009, docs/sql.md; docs/guide/chat.md):
// starting turns records the last one, ids that are any storable string round-trip, unstorable ones
// are refused before SQL, turns started at once from two connections leave one of them active, and
// deleting the run deletes the row.
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  chatTurnId,
  chatTurnInput,
  connect,
  createDurable,
  type Durable,
  defineWorkflow,
  InvalidInputError,
  readActiveChatTurn,
  startChatTurn,
} from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";

const chat = defineWorkflow({ name: "pg-chat", input: chatTurnInput, run: async () => "ok" });

let a: Durable;
let b: Durable;
beforeAll(async () => {
  const url = await createTestDatabase("durable_chats");
  a = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [chat], log: () => {} });
  b = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [chat], log: () => {} });
  await a.migrate();
});
afterAll(async () => {
  await a.close();
  await b.close();
});

const user = (id: string, text = "hi") => ({ id, role: "user" as const, parts: [{ type: "text", text }] });

it("records each turn started as the chat's active one, the last winning; a repeat starts nothing", async () => {
  const first = await startChatTurn(a, chat, { chatId: "c-1", messages: [user("m1")] });
  expect(first.created).toBe(true);
  expect(await readActiveChatTurn(a, "c-1")).toMatchObject({ chatId: "c-1", runId: first.runId, status: "pending" });
  const second = await startChatTurn(a, chat, { chatId: "c-1", messages: [user("m1"), user("m2")] });
  expect(second.runId).not.toBe(first.runId);
  expect((await readActiveChatTurn(b, "c-1"))!.runId).toBe(second.runId);
  const repeat = await startChatTurn(b, chat, { chatId: "c-1", messages: [user("m1"), user("m2")] });
  expect(repeat).toMatchObject({ runId: second.runId, created: false });
  const turn = await readActiveChatTurn(a, "c-1");
  expect(turn!.input).toEqual({ chatId: "c-1", messages: [user("m1"), user("m2")] });
  expect(await readActiveChatTurn(a, "c-none")).toBeNull();
});

it("stores any storable chat id and message id, and refuses the others before any SQL", async () => {
  for (const chatId of ["é 💬 \"quoted\" 'x' \\ / ? #", "a".repeat(255), " ", "a:b"]) {
    const started = await startChatTurn(a, chat, { chatId, messages: [user("🙂 id with spaces")] });
    expect((await readActiveChatTurn(a, chatId))!.runId).toBe(started.runId);
  }
  // Joined ids would collide here; the hash does not.
  const x = chatTurnId(chatTurnInput.parse({ chatId: "a:b", messages: [user("c")] }));
  const y = chatTurnId(chatTurnInput.parse({ chatId: "a", messages: [user("b:c")] }));
  expect(x).not.toBe(y);
  for (const chatId of ["", "a".repeat(256), "nul\u0000", "lone \ud800"]) {
    await expect(readActiveChatTurn(a, chatId)).rejects.toThrow(InvalidInputError);
    await expect(startChatTurn(a, chat, { chatId, messages: [user("m")] })).rejects.toThrow(InvalidInputError);
  }
  await expect(startChatTurn(a, chat, { chatId: "c-2", messages: [] })).rejects.toThrow(InvalidInputError);
  await expect(
    startChatTurn(a, chat, { chatId: "c-2", messages: [{ id: "x", role: "assistant", parts: [] }] }),
  ).rejects.toThrow(InvalidInputError);
  expect(await readActiveChatTurn(a, "c-2")).toBeNull();
});

it("turns of one chat started at once from two connections leave one of them active", async () => {
  for (let round = 0; round < 10; round++) {
    const chatId = `race-${round}`;
    const [x, y] = await Promise.all([
      startChatTurn(a, chat, { chatId, messages: [user("m1")] }),
      startChatTurn(b, chat, { chatId, messages: [user("m1"), user("m2")] }),
    ]);
    const active = (await readActiveChatTurn(a, chatId))!.runId;
    expect([x.runId, y.runId]).toContain(active);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from durable_chats where chat_id = ${chatId}`.execute(a.db);
    expect(rows[0]!.n).toBe(1);
  }
});

it("deleting the turn's run deletes the chat's row", async () => {
  const started = await startChatTurn(a, chat, { chatId: "c-3", messages: [user("m1")] });
  await sql`delete from durable_runs where id = ${started.runId}`.execute(a.db);
  expect(await readActiveChatTurn(a, "c-3")).toBeNull();
});
