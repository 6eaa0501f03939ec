// DurableChatTransport (lib/durable/ai/react/durable-chat-transport.ts) against the chat routes served
// by a real node:http server on PGlite, read by the AI SDK's own Chat (@ai-sdk/react's, no React
// rendering needed): a POST cut mid-answer (a function killed) is continued from GET …/stream with
// Last-Event-ID, with no gap and no repeat; stop() sends DELETE and the run ends cancelled.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Chat } from "@ai-sdk/react";
import type { UIMessageChunk } from "ai";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { type ChatRoutes, chatTurnInput, createChatRoutes, loadChat } from "@/lib/durable/ai";
import { DurableChatTransport } from "@/lib/durable/ai-react";
import { until } from "../helpers/until";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How many words each chat may say so far (no entry: all). */
const allowance = new Map<string, number>();

/** "say a b c": streams the words; "hang a b": then waits on its abortSignal until cancelled. */
const chat = defineWorkflow({
  name: "transport-chat",
  input: chatTurnInput,
  async run(ctx, input) {
    const last = input.messages[input.messages.length - 1]!;
    const text = last.parts.map((p) => (p.type === "text" ? (p as { text: string }).text : "")).join("");
    const [mode, ...words] = text.split(" ");
    return ctx.step.run(
      "answer",
      async (s) => {
        const out = ctx.stream("answer");
        out.write({ type: "start-step" });
        out.write({ type: "text-start", id: "t" });
        for (const [i, word] of words.entries()) {
          while ((allowance.get(input.chatId) ?? Number.POSITIVE_INFINITY) <= i) await sleep(2);
          out.write({ type: "text-delta", id: "t", delta: `${word} ` });
          await out.flush();
        }
        if (mode === "hang") await new Promise((_, reject) => s.abortSignal.addEventListener("abort", reject));
        out.write({ type: "text-end", id: "t" });
        out.write({ type: "finish-step" });
        return words.join(" ");
      },
      { heartbeat: "100ms" },
    );
  },
});

let durable: Durable;
let routes: ChatRoutes;
let server: Server;
let api: string;
/** Every request the server saw: method, path, Last-Event-ID. */
let seen: { method: string; path: string; lastEventId: string | null }[] = [];
/** The POST of these chats is cut (the socket destroyed) after this many events. */
const cutPostAfter = new Map<string, number>();
/** What to do once a chat's POST was cut: let its answer go on (the words it may write). */
const afterCut = new Map<string, () => void>();

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
  const body = req.method === "GET" || req.method === "DELETE" ? undefined : Buffer.concat(chunks);
  return new Request(`http://localhost${req.url}`, { method: req.method, headers, body });
}

/** Sends the response; a POST of a chat in `cutPostAfter` dies after that many events, as a killed function's does. */
async function send(
  res: ServerResponse,
  response: Response,
  cutAfter: number | undefined,
  onCut?: () => void,
): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  let events = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return void res.end();
    const text = Buffer.from(value).toString("utf8");
    events += text.split("\n\n").filter((block) => block.includes("data: ")).length;
    // Written, then the socket dies: what the client got is what a killed function had sent.
    await new Promise((resolve) => res.write(value, resolve));
    if (cutAfter !== undefined && events >= cutAfter) {
      await reader.cancel();
      res.socket?.destroy();
      return onCut?.();
    }
  }
}

beforeAll(async () => {
  durable = createDurable({ db: await connect("memory://"), workflows: [chat], log: () => {} });
  await durable.migrate();
  routes = createChatRoutes(async () => durable, {
    workflow: chat,
    authorize: (request) => request.headers.get("x-user") === "ann",
    log: () => {},
    stream: { pollMs: 10 },
  });
  server = createServer((req, res) => {
    void (async () => {
      const request = await toRequest(req);
      const path = new URL(request.url).pathname;
      seen.push({ method: request.method, path, lastEventId: request.headers.get("last-event-id") });
      const match = /^\/api\/chat\/([^/]+)\/stream$/.exec(path);
      if (path === "/api/chat") {
        const chatId = JSON.parse(await request.clone().text()).id as string;
        return send(res, await routes.chat.POST(request), cutPostAfter.get(chatId), afterCut.get(chatId));
      }
      if (!match) return void res.writeHead(404).end();
      const context = { params: Promise.resolve({ chatId: decodeURIComponent(match[1]!) }) };
      const handler = request.method === "DELETE" ? routes.stream.DELETE : routes.stream.GET;
      return send(res, await handler(request, context), undefined);
    })().catch((e) => {
      res.destroy(e as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
});
afterAll(async () => {
  await routes.idle();
  await new Promise((resolve) => server.close(resolve));
  await durable.close();
});
beforeEach(() => {
  seen = [];
});

const transport = () => new DurableChatTransport({ api, headers: { "x-user": "ann" }, reconnectDelayMs: 20 });
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
const user = (id: string, text: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text }] });

async function collect(stream: ReadableStream<UIMessageChunk>, stop?: (chunks: UIMessageChunk[]) => boolean) {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
    if (stop?.(chunks)) {
      reader.releaseLock();
      return chunks;
    }
  }
}
const deltas = (chunks: UIMessageChunk[]) => chunks.flatMap((c) => (c.type === "text-delta" ? [c.delta] : [])).join("");

it("continues a POST cut mid-answer from GET …/stream with Last-Event-ID: no gap, no repeat", async () => {
  allowance.set("cut-1", 3);
  cutPostAfter.set("cut-1", 5); // start, start-step, text-start, w0, w1: then the socket dies
  afterCut.set("cut-1", () => allowance.set("cut-1", 12));
  const stream = await transport().sendMessages({
    trigger: "submit-message",
    chatId: "cut-1",
    messageId: undefined,
    messages: [user("m1", `say ${words(12).join(" ")}`)],
    abortSignal: undefined,
  });
  const chunks = await collect(stream);
  expect(chunks.map((c) => c.type)).toEqual([
    "start",
    "start-step",
    "text-start",
    ...words(12).map(() => "text-delta"),
    "text-end",
    "finish-step",
    "finish",
  ]);
  expect(deltas(chunks)).toBe(
    words(12)
      .map((w) => `${w} `)
      .join(""),
  );
  // One reconnect, from the last seq the POST brought (the cut came after the fifth event).
  const gets = seen.filter((r) => r.method === "GET");
  expect(gets).toEqual([{ method: "GET", path: "/api/chat/cut-1/stream", lastEventId: expect.any(String) }]);
  expect(Number(gets[0]!.lastEventId)).toBeGreaterThanOrEqual(3);
});

it("useChat's Chat shows the answer of a cut POST once, equal to the stored text", async () => {
  allowance.set("cut-2", 2);
  cutPostAfter.set("cut-2", 4);
  afterCut.set("cut-2", () => allowance.delete("cut-2"));
  const client = new Chat({ id: "cut-2", transport: transport() });
  await client.sendMessage({ text: `say ${words(8).join(" ")}` });
  expect(client.status).toBe("ready");
  expect(client.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  const shown = client.messages[1]!.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  expect(shown).toBe(
    words(8)
      .map((w) => `${w} `)
      .join(""),
  );
  const stored = await loadChat(durable, "cut-2");
  expect(stored[1]!.parts).toEqual(client.messages[1]!.parts);
  expect(client.messages[1]!.id).toBe(stored[1]!.id);
});

it("stop() sends DELETE and the turn's run ends cancelled, its chunks kept", async () => {
  const client = new Chat({ id: "stop-1", transport: transport() });
  const sending = client.sendMessage({ text: "hang partial words" });
  await until(() => {
    const answer = client.messages[1];
    return answer?.parts.some((p) => p.type === "text" && p.text === "partial words ") ?? false;
  });
  await client.stop();
  await sending;
  await until(() => seen.some((r) => r.method === "DELETE" && r.path === "/api/chat/stop-1/stream"));
  const runId = client.messages[1]!.id;
  await until(async () => (await durable.status(runId))!.status === "cancelled", 5000);
  const stored = await durable.readStream(runId);
  expect(stored!.chunks.map((c) => c.data)).toContainEqual({ type: "text-delta", id: "t", delta: "words " });
  await routes.idle();
});

it("reconnectToStream replays an active turn from its start, and answers null when there is none", async () => {
  const t = transport();
  expect(await t.reconnectToStream({ chatId: "none-1" })).toBeNull();
  allowance.set("resume-1", 2);
  const post = await t.sendMessages({
    trigger: "submit-message",
    chatId: "resume-1",
    messageId: undefined,
    messages: [user("m1", "say a b c d")],
    abortSignal: undefined,
  });
  await collect(post, (chunks) => deltas(chunks) === "a b ");
  await post.cancel();
  const resumed = await t.reconnectToStream({ chatId: "resume-1" });
  allowance.delete("resume-1");
  const chunks = await collect(resumed!);
  expect(chunks[0]).toMatchObject({ type: "start" });
  expect(deltas(chunks)).toBe("a b c d ");
  expect(chunks.at(-1)).toEqual({ type: "finish" });
  expect(seen.some((r) => r.method === "DELETE")).toBe(false);
  expect(await t.reconnectToStream({ chatId: "resume-1" })).toBeNull();
});
