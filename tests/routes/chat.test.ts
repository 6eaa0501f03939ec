// The chat routes (docs/guide/chat.md): POST /api/chat starts a turn and answers its UI message
// stream, GET /api/chat/{chatId}/stream resumes the active turn, DELETE stops it. The handlers are
// called with Request objects on PGlite; the chat workflow writes UI chunks itself (`ctx.step.run`
// and `ctx.stream`), standing in for `ctx.step.ai.agent(..., { stream: true })`.
import { convertToModelMessages } from "ai";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  chatTurnId,
  chatTurnInput,
  createDurable,
  connect,
  defineWorkflow,
  type Durable,
  FatalStepError,
  loadChat,
  readActiveChatTurn,
  TURN_END_PART,
  turnEndOf,
} from "@/lib/durable";
import { type ChatRoutes, type ChatRoutesOptions, createChatRoutes } from "@/lib/durable/ai";
import { until } from "../helpers/until";
import { scanForPlaintext } from "../helpers/plaintext-scan";
import { readUiEvents, textOf, typesOf, type UiEvent } from "../helpers/ui-stream";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many words each gated chat may say so far (no entry: all of them). */
const allowance = new Map<string, number>();

/**
 * The user's text says what the turn does: "say a b c" streams the words; "hang a b" streams them
 * and then waits on the step's abortSignal; "break a b" streams "oops" in a first attempt that
 * fails, then the words; "fail" fails; "park" waits for a signal; "fake a b" streams the words and
 * a turn's end of its own, as only the routes may write it.
 */
const chat = defineWorkflow({
  name: "chat-test",
  input: chatTurnInput,
  signals: { go: z.object({}) },
  async run(ctx, input) {
    const last = input.messages[input.messages.length - 1]!;
    const text = last.parts.map((part) => (part.type === "text" ? (part as { text: string }).text : "")).join("");
    const [mode, ...words] = text.split(" ");
    if (mode === "park") {
      await ctx.step.run("intro", () => ctx.stream("intro").write({ type: "text-start", id: "p" }));
      await ctx.step.waitForSignal("go", { timeout: "1h" });
    }
    return ctx.step.run(
      "answer",
      async (s) => {
        const out = ctx.stream("answer");
        if (mode === "fail") throw new FatalStepError("the model is down");
        out.write({ type: "start-step" });
        out.write({ type: "text-start", id: `t${s.attempt}` });
        if (mode === "break" && s.attempt === 1) {
          out.write({ type: "text-delta", id: "t1", delta: "oops " });
          await out.flush();
          throw new Error("the first attempt breaks after streaming");
        }
        for (const [i, word] of words.entries()) {
          while ((allowance.get(input.chatId) ?? Number.POSITIVE_INFINITY) <= i) await sleep(2);
          out.write({ type: "text-delta", id: `t${s.attempt}`, delta: `${word} ` });
          await out.flush();
        }
        if (mode === "fake") out.write({ type: TURN_END_PART, data: { status: "cancelled", reason: "not really" } });
        if (mode === "hang") {
          await new Promise((_, reject) => s.abortSignal.addEventListener("abort", () => reject(s.abortSignal.reason)));
        }
        out.write({ type: "text-end", id: `t${s.attempt}` });
        out.write({ type: "finish-step" });
        return words.join(" ");
      },
      { retries: 1, retryDelay: 0, heartbeat: "100ms" },
    );
  },
});

let durable: Durable;
let routes: ChatRoutes;
/** How often the routes asked for the durable instance: a refused request never does. */
let opened = 0;
const allowed = new Set<string>();
const authorize = (request: Request, chatId: string) =>
  request.headers.get("x-user") === "ann" && (allowed.has(chatId) || chatId.startsWith("ann-"));

beforeAll(async () => {
  durable = createDurable({ db: await connect("memory://"), workflows: [chat], log: () => {} });
  await durable.migrate();
  routes = routesWith({});
});
afterAll(() => durable.close());

function routesWith(more: Partial<ChatRoutesOptions>): ChatRoutes {
  return createChatRoutes(
    async () => {
      opened++;
      return durable;
    },
    { workflow: chat, authorize, log: () => {}, stream: { pollMs: 10 }, ...more },
  );
}

const user = (id: string, text: string) => ({ id, role: "user" as const, parts: [{ type: "text", text }] });
const ann = { "x-user": "ann", "content-type": "application/json" };
const chatUrl = (path = "") => `http://localhost/api/chat${path}`;
const ctxOf = (chatId: string) => ({ params: Promise.resolve({ chatId }) });

function post(body: unknown, headers: Record<string, string> = ann, via = routes) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return via.chat.POST(new Request(chatUrl(), { method: "POST", headers, body: text }));
}
function resume(chatId: string, headers: Record<string, string> = { "x-user": "ann" }) {
  return routes.stream.GET(new Request(chatUrl(`/${encodeURIComponent(chatId)}/stream`), { headers }), ctxOf(chatId));
}
function stop(chatId: string, headers: Record<string, string> = { "x-user": "ann" }) {
  const request = new Request(chatUrl(`/${encodeURIComponent(chatId)}/stream`), { method: "DELETE", headers });
  return routes.stream.DELETE(request, ctxOf(chatId));
}
const turnBody = (chatId: string, messageId: string, text: string) => ({
  id: chatId,
  messages: [user(messageId, text)],
  trigger: "submit-message",
});

/** Every durable_* table's rows as text: "nothing written" is this unchanged. */
async function tables(): Promise<string> {
  const { rows } = await sql<{ t: string }>`
    select (select count(*) from durable_runs) || ':' || (select count(*) from durable_chats) || ':' ||
           (select count(*) from durable_stream_chunks) || ':' || (select count(*) from durable_steps) as t`.execute(
    durable.db,
  );
  return rows[0]!.t;
}
/** The turn's run id, from the stream's `start`. */
const messageIdOf = (events: UiEvent[]) => (events[0]!.data as unknown as { messageId: string }).messageId;
const seqs = (events: UiEvent[]) => events.filter((e) => e.id !== undefined).map((e) => Number(e.id));

describe("POST /api/chat", () => {
  it("starts the turn and answers start, the chunks with their seqs, finish and [DONE]", async () => {
    const response = await post(turnBody("ann-1", "m1", "say hello there world"));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const { events, ended } = await readUiEvents(response);
    expect(ended).toBe(true);
    const runId = chatTurnId(chatTurnInput.parse({ chatId: "ann-1", messages: [user("m1", "x")] }));
    expect(events[0]).toEqual({ id: "0", data: { type: "start", messageId: runId } });
    expect(typesOf(events)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
      "[DONE]",
    ]);
    expect(seqs(events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(textOf(events)).toBe("hello there world ");
    expect((await durable.status(runId))!.status).toBe("completed");
    expect((await readActiveChatTurn(durable, "ann-1"))!.runId).toBe(runId);
  });

  it("the same POST twice starts one run and answers the same stream", async () => {
    const body = turnBody("ann-2", "m1", "say once");
    const first = await readUiEvents(await post(body));
    const second = await readUiEvents(await post(body));
    expect(second.events).toEqual(first.events);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from durable_runs where input->>'chatId' = 'ann-2'`.execute(durable.db);
    expect(rows[0]!.n).toBe(1);
  });

  it("a second user message is a new turn, and becomes the chat's active one", async () => {
    await readUiEvents(await post(turnBody("ann-3", "m1", "say one")));
    const answer = { id: "a1", role: "assistant", parts: [{ type: "text", text: "one" }] };
    const body = { id: "ann-3", messages: [user("m1", "say one"), answer, user("m2", "say two")] };
    const { events } = await readUiEvents(await post(body));
    expect(textOf(events)).toBe("two ");
    const turn = await readActiveChatTurn(durable, "ann-3");
    expect(turn!.runId).toBe(messageIdOf(events));
    expect(turn!.runId).not.toBe(chatTurnId(chatTurnInput.parse({ chatId: "ann-3", messages: [user("m1", "")] })));
  });

  it("refuses a bad body with 400 and the error body, writing nothing", async () => {
    const before = await tables();
    const bad: unknown[] = [
      "{not json",
      { messages: [user("m", "say x")] },
      { id: "ann-4", messages: "hi" },
      { id: "ann-4", messages: [] },
      { id: "ann-4", messages: [{ role: "user", parts: [] }] },
      { id: "ann-4", messages: [{ id: "a", role: "assistant", parts: [] }] },
      { id: "ann-4", messages: [user("m", "say x")], trigger: "nonsense" },
    ];
    for (const body of bad) {
      const response = await post(body);
      expect(response.status).toBe(400);
      const error = (await response.json()).error;
      expect(error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    }
    await routes.idle();
    expect(await tables()).toBe(before);
  });

  it("a request authorize refuses is a 404 that neither reads nor writes", async () => {
    const before = await tables();
    const openedBefore = opened;
    for (const response of [
      await post(turnBody("bob-1", "m1", "say x")),
      await post(turnBody("ann-5", "m1", "say x"), { "content-type": "application/json", "x-user": "bob" }),
      await resume("bob-1"),
      await stop("bob-1"),
    ]) {
      expect(response.status).toBe(404);
      expect((await response.json()).error.code).toBe("chat_not_found");
    }
    expect(opened).toBe(openedBefore);
    expect(await tables()).toBe(before);
  });

  it("refuses to mount without authorize", () => {
    const getDurable = async () => durable;
    expect(() => createChatRoutes(getDurable, { workflow: chat } as never)).toThrow(/authorize/);
    expect(() => createChatRoutes(getDurable, { workflow: chat, authorize: true } as never)).toThrow(/authorize/);
  });

  it("a failed turn answers error before finish", async () => {
    const { events } = await readUiEvents(await post(turnBody("ann-6", "m1", "fail")));
    // The turn's end first (a reader stops at error), then the error.
    expect(typesOf(events).slice(-4)).toEqual([TURN_END_PART, "error", "finish", "[DONE]"]);
    expect(events.at(-4)!.data).toEqual({
      type: TURN_END_PART,
      data: { status: "failed", reason: expect.stringContaining("the model is down") },
    });
    expect(events.at(-3)!.data).toMatchObject({ errorText: expect.stringContaining("the model is down") });
    // Loaded afresh, the answer (nothing was written) says the turn failed, and why.
    const history = await loadChat(durable, "ann-6");
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]!.id).toBe(messageIdOf(events));
    expect(turnEndOf(history[1]!)).toEqual({ status: "failed", reason: expect.stringContaining("the model is down") });
  });

  it("a turn parked on a signal answers finish, and its resume continues once the signal came", async () => {
    const { events } = await readUiEvents(await post(turnBody("ann-7", "m1", "park a b")));
    expect(typesOf(events)).toEqual(["start", "text-start", "finish", "[DONE]"]);
    const runId = messageIdOf(events);
    await durable.signal({ runId, name: "go", payload: {} });
    const resumed = await readUiEvents(await resume("ann-7"));
    expect(typesOf(resumed.events).slice(0, 2)).toEqual(["start", "text-start"]);
    expect(typesOf(resumed.events).slice(-2)).toEqual(["finish", "[DONE]"]);
    expect(textOf(resumed.events)).toBe("a b ");
    await routes.idle();
  });
});

describe("GET /api/chat/{chatId}/stream", () => {
  it("answers 204 for a chat with no turn, and for a finished turn read from the beginning", async () => {
    expect((await resume("ann-none")).status).toBe(204);
    await readUiEvents(await post(turnBody("ann-8", "m1", "say done")));
    expect((await resume("ann-8")).status).toBe(204);
  });

  it("resumes from Last-Event-ID with no gap and no repeat, without start", async () => {
    allowance.set("ann-9", 2);
    const cut = await readUiEvents(await post(turnBody("ann-9", "m1", "hang one two three four five")), (events) =>
      events.some((e) => e.data !== "[DONE]" && e.data.type === "text-delta" && e.data.delta === "two "),
    );
    expect(cut.ended).toBe(false);
    const last = seqs(cut.events).at(-1)!;
    allowance.set("ann-9", 5);
    const rest = await readUiEvents(await resume("ann-9", { "x-user": "ann", "last-event-id": String(last) }), (e) =>
      e.some((event) => event.data !== "[DONE]" && event.data.type === "text-delta" && event.data.delta === "five "),
    );
    expect(typesOf(rest.events)).not.toContain("start");
    const all = [...seqs(cut.events), ...seqs(rest.events)];
    expect(all).toEqual(all.map((_, i) => i));
    expect(textOf([...cut.events, ...rest.events])).toBe("one two three four five ");
    // From the beginning: start first, then the same chunks.
    const replay = await readUiEvents(await resume("ann-9"), (e) => textOf(e).includes("five"));
    expect(replay.events[0]!.data).toMatchObject({ type: "start" });
    expect(textOf(replay.events)).toBe("one two three four five ");
    expect((await stop("ann-9")).status).toBe(200);
    await routes.idle();
  });

  it("skips the chunks of an attempt that broke", async () => {
    const live = await readUiEvents(await post(turnBody("ann-10", "m1", "break fine now")));
    expect(typesOf(live.events).slice(-2)).toEqual(["finish", "[DONE]"]);
    const again = await readUiEvents(await resume("ann-10", { "x-user": "ann", "last-event-id": "0" }));
    expect(textOf(again.events)).toBe("fine now ");
    expect(typesOf(again.events)).toEqual([
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
      "[DONE]",
    ]);
    const history = await loadChat(durable, "ann-10");
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]!.parts).toEqual([
      { type: "step-start" },
      expect.objectContaining({ type: "text", text: "fine now ", state: "done" }),
    ]);
  });

  it("refuses a Last-Event-ID that is not a seq with 400", async () => {
    const response = await resume("ann-1", { "x-user": "ann", "last-event-id": "abc" });
    expect(response.status).toBe(400);
  });
});

describe("DELETE /api/chat/{chatId}/stream", () => {
  it("cancels a turn mid-stream; the run ends cancelled with its chunks kept", async () => {
    const response = await post(turnBody("ann-11", "m1", "hang partial answer"));
    const { events } = await readUiEvents(response, (e) => textOf(e) === "partial answer ");
    const runId = messageIdOf(events);
    const stopped = await stop("ann-11");
    expect(stopped.status).toBe(200);
    expect(await stopped.json()).toEqual({ cancelled: true });
    await until(async () => (await durable.status(runId))!.status === "cancelled");
    await routes.idle();
    expect(await (await stop("ann-11")).json()).toEqual({ cancelled: false });
    const stored = await durable.readStream(runId);
    expect(stored!.chunks.map((c) => c.data)).toEqual([
      { type: "start-step" },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "partial " },
      { type: "text-delta", id: "t1", delta: "answer " },
    ]);
    // A reader cut off before the stop gets the rest and the end; a fresh one has nothing to resume.
    const tail = await readUiEvents(await resume("ann-11", { "x-user": "ann", "last-event-id": "2" }));
    expect(typesOf(tail.events)).toEqual(["text-delta", "text-delta", TURN_END_PART, "finish", "[DONE]"]);
    expect(tail.events[2]!.data).toEqual({ type: TURN_END_PART, data: { status: "cancelled", reason: "stopped" } });
    expect((await resume("ann-11")).status).toBe(204);
    const history = await loadChat(durable, "ann-11");
    expect(history[1]).toMatchObject({ id: runId, role: "assistant" });
    // The answer as far as it went (the text part never ended), then the mark of its stop, read
    // from the cancelled run: the reason the route gave the cancel.
    expect(history[1]!.parts).toEqual([
      { type: "step-start" },
      expect.objectContaining({ type: "text", text: "partial answer ", state: "streaming" }),
      { type: TURN_END_PART, data: { status: "cancelled", reason: "stopped" } },
    ]);
    expect(turnEndOf(history[1]!)).toEqual({ status: "cancelled", reason: "stopped" });

    // The next turn sends the stopped answer back with its mark: the history keeps it, and the
    // model is not shown it (convertToModelMessages leaves data parts out).
    const next = { id: "ann-11", messages: [...history, user("m2", "say more")] };
    const second = await readUiEvents(await post(next));
    await until(async () => (await durable.status(messageIdOf(second.events)))!.status === "completed");
    const later = await loadChat(durable, "ann-11");
    expect(later.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(turnEndOf(later[1]!)).toEqual({ status: "cancelled", reason: "stopped" });
    expect(turnEndOf(later[3]!)).toBeNull();
    const model = await convertToModelMessages(later.slice(0, 2));
    expect(JSON.stringify(model)).not.toContain(TURN_END_PART);
    expect(JSON.stringify(model)).toContain("partial answer");
    await routes.idle();
  });

  it("a turn stopped before it wrote a word loads as an answer with the mark", async () => {
    allowance.set("ann-13", 0);
    const response = await post(turnBody("ann-13", "m1", "hang never said"));
    const { events } = await readUiEvents(response, (e) => typesOf(e).includes("text-start"));
    const runId = messageIdOf(events);
    expect((await stop("ann-13")).status).toBe(200);
    await until(async () => (await durable.status(runId))!.status === "cancelled");
    allowance.delete("ann-13");
    await routes.idle();
    const history = await loadChat(durable, "ann-13");
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]!.id).toBe(runId);
    expect(history[1]!.parts.filter((p) => p.type === "text" && p.text !== "")).toEqual([]);
    expect(turnEndOf(history[1]!)).toEqual({ status: "cancelled", reason: "stopped" });
  });
});

describe("loadChat", () => {
  it("a turn's end the workflow wrote itself is neither passed on nor loaded: only the routes say it", async () => {
    const { events } = await readUiEvents(await post(turnBody("ann-14", "m1", "fake done")));
    expect(typesOf(events)).not.toContain(TURN_END_PART);
    expect(textOf(events)).toBe("done ");
    const runId = messageIdOf(events);
    await until(async () => (await durable.status(runId))!.status === "completed");
    const history = await loadChat(durable, "ann-14");
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(turnEndOf(history[1]!)).toBeNull();
    expect(history[1]!.parts.map((p) => p.type)).not.toContain(TURN_END_PART);
    await routes.idle();
  });

  it("answers the latest turn's messages and its answer; a turn under way without its answer", async () => {
    expect(await loadChat(durable, "ann-never")).toEqual([]);
    await readUiEvents(await post(turnBody("ann-12", "m1", "say first")));
    const history = await loadChat(durable, "ann-12");
    expect(history).toEqual([
      user("m1", "say first"),
      {
        id: chatTurnId(chatTurnInput.parse({ chatId: "ann-12", messages: [user("m1", "")] })),
        role: "assistant",
        parts: [{ type: "step-start" }, expect.objectContaining({ type: "text", text: "first " })],
      },
    ]);
    allowance.set("ann-12", 1);
    const body = { id: "ann-12", messages: [...history, user("m2", "say second third")] };
    const live = await readUiEvents(await post(body), (e) => textOf(e) === "second ");
    expect(await loadChat(durable, "ann-12")).toEqual(body.messages);
    allowance.delete("ann-12");
    const runId = messageIdOf(live.events);
    await until(async () => (await durable.status(runId))!.status === "completed");
    const after = await loadChat(durable, "ann-12");
    expect(after).toHaveLength(4);
    expect(after[3]!.parts).toEqual([{ type: "step-start" }, expect.objectContaining({ text: "second third " })]);
    await routes.idle();
  });
});

describe("with encryption at rest (docs/guide/encryption.md)", () => {
  it("streams a turn and loads it plain, while no table holds its words", async () => {
    const secret = Buffer.alloc(32, 7).toString("base64");
    const sealed = createDurable({
      db: await connect("memory://"),
      workflows: [chat],
      encryption: { keys: [{ id: "chat", secret }] },
      log: () => {},
    });
    try {
      await sealed.migrate();
      const via = createChatRoutes(async () => sealed, { workflow: chat, authorize, log: () => {} });
      const first = await readUiEvents(await post(turnBody("ann-enc", "m1", "say confidential quince"), ann, via));
      expect(textOf(first.events)).toBe("confidential quince ");
      const again = await via.stream.GET(
        new Request(chatUrl("/ann-enc/stream"), { headers: { "x-user": "ann" } }),
        ctxOf("ann-enc"),
      );
      expect(again.status).toBe(204); // the turn ended: nothing to resume, loadChat has it
      const history = await loadChat(sealed, "ann-enc");
      expect(history[0]).toEqual(user("m1", "say confidential quince"));
      expect(history[1]!.parts.map((part) => (part.type === "text" ? part.text : "")).join("")).toBe(
        "confidential quince ",
      );
      expect(await scanForPlaintext(sealed.db, ["confidential", "quince"])).toEqual([]);
    } finally {
      await sealed.close();
    }
  });
});
