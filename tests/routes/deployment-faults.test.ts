// A fault of the deployment, not of the request, as a new user meets it: a secret unset in
// production answers a clear 503 and the server log says why, once, naming the variable and never
// a value; the reference app's chat (/chat/new, POST /api/chat) answers the same 503 instead of a
// bare 500; a signal key without the whsec_ prefix is warned about once (docs/guide/http-routes.md,
// "Secrets").
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { chatTurnInput, defineWorkflow, type Durable } from "@/lib/durable";
import { createFixture, greet, type RouteFixture, SECRETS, SIGNAL_KEY, url } from "./harness";

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture();
});
afterAll(() => fx.durable.close());
beforeEach(() => {
  // "Once" is remembered by the modules (per process): each case below imports fresh ones.
  vi.resetModules();
  vi.stubEnv("NODE_ENV", "production");
  for (const name of ["DURABLE_SECRET", "CRON_SECRET", "DURABLE_SIGNAL_SECRET"]) vi.stubEnv(name, undefined);
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const tick = () => new Request(url("/tick"), { headers: { authorization: "Bearer anything" } });

describe("a secret missing in production", () => {
  it("answers 503 naming the variable, and logs it once at the first request, without a value", async () => {
    const { createDurableRoutes } = await import("@/lib/durable/next");
    const lines: string[] = [];
    const secrets = { durable: SECRETS.durable, signal: SECRETS.signal };
    const routes = createDurableRoutes(async () => fx.durable, { secrets, log: (m) => lines.push(m) });
    for (let i = 0; i < 3; i++) {
      const response = await routes.tick.GET(tick());
      expect(response.status).toBe(503);
      const body = await response.json();
      expect(body.error.code).toBe("secret_missing");
      expect(body.error.message).toMatch(/CRON_SECRET is not set/);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^GET \/api\/durable\/tick answered 503 \(logged once\): CRON_SECRET is not set/);
    for (const value of Object.values(SECRETS)) expect(lines[0]).not.toContain(value);
  });

  it("logs through the default log (console.warn) when the app gives none", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { createDurableRoutes } = await import("@/lib/durable/next");
    const routes = createDurableRoutes(async () => fx.durable, { secrets: { cron: SECRETS.cron } });
    const runs = () =>
      routes.runs.POST(
        new Request(url("/runs"), {
          method: "POST",
          headers: { authorization: "Bearer x", "content-type": "application/json" },
          body: JSON.stringify({ workflow: greet.name, input: { name: "x" } }),
        }),
      );
    expect((await runs()).status).toBe(503);
    expect((await runs()).status).toBe(503);
    const logged = warn.mock.calls.map((call) => String(call[0])).filter((line) => line.includes("DURABLE_SECRET"));
    expect(logged).toEqual([expect.stringMatching(/^\[durable\] POST \/api\/durable\/runs answered 503/)]);
  });
});

describe("the reference app's chat without DURABLE_SECRET in production", () => {
  it("/chat/new answers the 503 JSON error, not a bare 500, and logs it once", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { GET } = await import("@/app/chat/new/route");
    const { NextRequest } = await import("next/server");
    for (let i = 0; i < 2; i++) {
      const response = await GET(new NextRequest("http://localhost:3000/chat/new"));
      expect(response.status).toBe(503);
      expect(response.headers.get("content-type")).toMatch(/application\/json/);
      const body = await response.json();
      expect(body.error.code).toBe("secret_missing");
      expect(body.error.message).toMatch(/DURABLE_SECRET is not set/);
    }
    const logged = warn.mock.calls.map((call) => String(call[0])).filter((line) => line.includes("DURABLE_SECRET"));
    expect(logged).toEqual([expect.stringMatching(/^\[durable\] GET \/chat\/new answered 503/)]);
  });

  it("POST /api/chat with the app's authorize answers the same 503", async () => {
    const { authorizeChat, SESSION_COOKIE } = await import("@/app/chat/session");
    const chat = defineWorkflow({ name: "chat-faults", input: chatTurnInput, signals: {}, run: async () => null });
    const { createChatRoutes } = await import("@/lib/durable/next");
    const lines: string[] = [];
    const routes = createChatRoutes(async () => ({}) as Durable, {
      workflow: chat,
      authorize: authorizeChat,
      log: (m) => lines.push(m),
    });
    const chatId = `chat-${"a".repeat(12)}-${"b".repeat(22)}`;
    const response = await routes.chat.POST(
      new Request("http://localhost:3000/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json", cookie: `${SESSION_COOKIE}=${"s".repeat(22)}` },
        body: JSON.stringify({ id: chatId, messages: [] }),
      }),
    );
    expect(response.status).toBe(503);
    expect((await response.json()).error).toMatchObject({ code: "secret_missing" });
    expect(lines).toEqual([expect.stringMatching(/^POST \/api\/chat answered 503 \(logged once\): DURABLE_SECRET/)]);
  });
});

describe("a signal key without the whsec_ prefix", () => {
  it("is warned about once, naming the key's place, never its value", async () => {
    vi.stubEnv("NODE_ENV", "test");
    const bare = SIGNAL_KEY.toString("base64");
    const { createDurableRoutes } = await import("@/lib/durable/next");
    const lines: string[] = [];
    const secrets = { ...SECRETS, signal: `${SECRETS.signal}, ${bare}` };
    const routes = createDurableRoutes(async () => fx.durable, { secrets, log: (m) => lines.push(m) });
    const signal = () =>
      routes.signal.POST(
        new Request(url("/signal"), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ runId: "nope", name: "decision" }),
        }),
      );
    expect((await signal()).status).toBe(401); // unsigned: refused, as before
    expect((await signal()).status).toBe(401);
    const warned = lines.filter((line) => line.includes("whsec_"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/DURABLE_SIGNAL_SECRET: key #2 of 2 does not start with "whsec_"/);
    expect(warned[0]).not.toContain(bare);
  });
});
