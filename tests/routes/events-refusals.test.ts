// POST /api/durable/events/{source}: every refusal, through the real route over PGlite, answered
// with the one error body and nothing changed in any table (tests/routes/harness.ts, fingerprint).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { signGithub } from "@/lib/durable/auth/github-signature";
import { signWebhook } from "@/lib/durable/auth/webhook";
import { stripeSignatureHeader } from "@/lib/durable/auth/stripe-signature";
import {
  createDurableRoutes,
  type DurableRoutes,
  type EventSource,
  githubSource,
  type InboundVerdict,
  MAX_BODY_BYTES,
  standardWebhooksSource,
  stripeSource,
} from "@/lib/durable/next";
import { createFixture, expectRefused, type RouteFixture, url, whsec } from "./harness";

const STRIPE_SECRET = "whsec_route_tests_stripe_secret";
const GITHUB_SECRET = "route tests, github secret";
const ACME_KEY = Buffer.from("route-tests-acme-standard-webhooks");

/** A source that answers what a test sets, and counts how often it was asked. */
const scripted = { verdict: { ok: true, id: "d-1", type: "thing.done", data: {} } as InboundVerdict, calls: 0 };
const scriptedSource: EventSource = {
  verify() {
    scripted.calls++;
    return scripted.verdict;
  },
};

let fx: RouteFixture;
let routes: DurableRoutes;
beforeAll(async () => {
  fx = await createFixture({
    eventSources: {
      stripe: stripeSource({ secret: STRIPE_SECRET }),
      github: githubSource({ secret: GITHUB_SECRET }),
      acme: standardWebhooksSource({ secret: whsec(ACME_KEY) }),
      scripted: scriptedSource,
    },
  });
  routes = fx.routes;
});
afterAll(() => fx.durable.close());
afterEach(() => {
  vi.unstubAllEnvs();
  scripted.calls = 0;
});

const source = (name: string) => ({ params: Promise.resolve({ source: name }) });
const post = (name: string, body: BodyInit, headers: Record<string, string> = {}) =>
  new Request(url(`/events/${name}`), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
const now = () => Math.floor(Date.now() / 1000);

const stripeEvent = JSON.stringify({ id: "evt_refused", object: "event", type: "invoice.paid", data: { object: {} } });
const stripeHeaders = (body: string, timestamp = now(), secret = STRIPE_SECRET) => ({
  "stripe-signature": stripeSignatureHeader(secret, timestamp, body),
});
const githubHeaders = (body: string, secret = GITHUB_SECRET) => ({
  "x-hub-signature-256": signGithub(secret, body),
  "x-github-event": "push",
  "x-github-delivery": "d6a3f1b0-0000-4000-8000-000000000001",
});
const acmeHeaders = (body: string, id = "msg_refused", timestamp = now()) => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": signWebhook(ACME_KEY, id, timestamp, body),
});

describe("POST /api/durable/events/{source}: unknown sources", () => {
  it("answers 404 for a name no source has, inherited object keys included", async () => {
    for (const name of ["nope", "__proto__", "constructor", "toString", "hasOwnProperty", "", "a".repeat(5000)]) {
      const body = await expectRefused(
        fx,
        () => routes.events.POST(post(encodeURIComponent(name), "{}"), source(name)),
        404,
        "event_source_not_found",
      );
      expect(body.error.message.length).toBeLessThan(200);
    }
  });

  it("knows stripe and github without configuration only when their variable is set, and names it", async () => {
    const bare = createDurableRoutes(async () => fx.durable, { log: () => {} });
    vi.stubEnv("STRIPE_WEBHOOK_SECRET", "");
    const body = await expectRefused(
      fx,
      () => bare.events.POST(post("stripe", "{}"), source("stripe")),
      404,
      undefined,
      bare,
    );
    expect(body.error.message).toMatch(/STRIPE_WEBHOOK_SECRET/);
    // Set: the path is the Stripe source, which verifies under the variable's secret.
    vi.stubEnv("STRIPE_WEBHOOK_SECRET", STRIPE_SECRET);
    const wrong = stripeHeaders(stripeEvent, now(), "whsec_some_other_secret");
    await expectRefused(
      fx,
      () => bare.events.POST(post("stripe", stripeEvent, wrong), source("stripe")),
      401,
      "unauthorized",
      bare,
    );
    vi.stubEnv("GITHUB_WEBHOOK_SECRET", GITHUB_SECRET);
    const unsigned = { "x-github-event": "push", "x-github-delivery": "d-2" };
    await expectRefused(
      fx,
      () => bare.events.POST(post("github", "{}", unsigned), source("github")),
      401,
      undefined,
      bare,
    );
  });

  it("answers every method but POST with 405", async () => {
    for (const method of ["GET", "PUT", "PATCH", "DELETE"] as const) {
      const response = await routes.events[method](new Request(url("/events/stripe"), { method }), source("stripe"));
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });
});

describe("POST /api/durable/events/{source}: bodies over the cap", () => {
  const big = "x".repeat(MAX_BODY_BYTES + 1);

  it("answers 413 before any verification: by content-length, and by counting an undeclared stream", async () => {
    const declared = () => post("scripted", big, { "content-length": String(big.length) });
    await expectRefused(fx, () => routes.events.POST(declared(), source("scripted")), 413, "payload_too_large");
    const streamed = () => {
      const chunk = new TextEncoder().encode("y".repeat(64 * 1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 5) controller.enqueue(chunk);
          else controller.close();
        },
      });
      return new Request(url("/events/scripted"), { method: "POST", body: stream, duplex: "half" } as RequestInit);
    };
    await expectRefused(fx, () => routes.events.POST(streamed(), source("scripted")), 413, "payload_too_large");
    expect(scripted.calls).toBe(0);
  });

  it("answers 413 for a correctly signed Stripe event one byte over the cap", async () => {
    const padded = JSON.stringify({ id: "evt_big", type: "invoice.paid", pad: "" });
    const over = padded.replace('"pad":""', `"pad":"${"p".repeat(MAX_BODY_BYTES + 1 - padded.length)}"`);
    expect(Buffer.byteLength(over)).toBe(MAX_BODY_BYTES + 1);
    const request = () => post("stripe", over, stripeHeaders(over));
    await expectRefused(fx, () => routes.events.POST(request(), source("stripe")), 413, "payload_too_large");
  });
});

describe("POST /api/durable/events/{source}: deliveries that are not authentic (401)", () => {
  it("Stripe: no header, a changed byte of body, signature or timestamp, a stale timestamp", async () => {
    const headers = stripeHeaders(stripeEvent);
    const signature = headers["stripe-signature"];
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === "0" ? "1" : "0") + text.slice(at + 1);
    const cases: Array<[string, Record<string, string>]> = [
      [stripeEvent, {}],
      [stripeEvent.replace("invoice.paid", "invoice.paiD"), headers],
      [stripeEvent, { "stripe-signature": flip(signature, signature.length - 1) }],
      [stripeEvent, { "stripe-signature": flip(signature, 2 + 9) }],
      [stripeEvent, stripeHeaders(stripeEvent, now() - 301)],
    ];
    for (const [body, h] of cases) {
      await expectRefused(fx, () => routes.events.POST(post("stripe", body, h), source("stripe")), 401, "unauthorized");
    }
    // The tolerance is Stripe's, on our clock: the same delivery read 301 s later is refused.
    const ts = now();
    const later = fx.routesWith({ nowSeconds: () => ts + 301 });
    const late = () => later.events.POST(post("stripe", stripeEvent, stripeHeaders(stripeEvent, ts)), source("stripe"));
    const body = await expectRefused(fx, late, 401, "unauthorized", later);
    expect(body.error.message).toBe("Stripe signature refused: stale timestamp");
  });

  it("GitHub: no signature, another secret's, one byte of the body changed", async () => {
    const body = JSON.stringify({ zen: "Design for failure." });
    const { "x-hub-signature-256": _signature, ...unsigned } = githubHeaders(body);
    for (const [b, h] of [
      [body, unsigned],
      [body, githubHeaders(body, "another secret")],
      [body.replace("failure", "failurE"), githubHeaders(body)],
    ] as Array<[string, Record<string, string>]>) {
      await expectRefused(fx, () => routes.events.POST(post("github", b, h), source("github")), 401, "unauthorized");
    }
  });

  it("Standard Webhooks: a changed id, timestamp or body, and a timestamp outside ±300 s", async () => {
    const body = JSON.stringify({ type: "invoice.paid", timestamp: "2026-12-04T00:00:00Z", data: {} });
    const ts = now();
    const headers = acmeHeaders(body, "msg_1", ts);
    for (const [b, h] of [
      [body, { ...headers, "webhook-id": "msg_2" }],
      [body, { ...headers, "webhook-timestamp": String(ts + 1) }],
      [body.replace("paid", "paiD"), headers],
      [body, acmeHeaders(body, "msg_1", ts - 301)],
      [body, acmeHeaders(body, "msg_1", ts + 301)],
    ] as Array<[string, Record<string, string>]>) {
      await expectRefused(fx, () => routes.events.POST(post("acme", b, h), source("acme")), 401, "unauthorized");
    }
  });
});

describe("POST /api/durable/events/{source}: authentic deliveries with no event to publish (400)", () => {
  it("answers 400 for a body that is not JSON, or an event without a type or an id", async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ["stripe", "not json", stripeHeaders("not json")],
      ["stripe", '{"id":"evt_1"}', stripeHeaders('{"id":"evt_1"}')],
      ["stripe", '{"type":"invoice.paid"}', stripeHeaders('{"type":"invoice.paid"}')],
      ["stripe", '{"id":"evt_1","type":7}', stripeHeaders('{"id":"evt_1","type":7}')],
      ["github", "{not json", githubHeaders("{not json")],
      ["acme", '{"data":{}}', acmeHeaders('{"data":{}}')],
      ["acme", "[1,2]", acmeHeaders("[1,2]")],
    ];
    for (const [name, body, headers] of cases) {
      await expectRefused(fx, () => routes.events.POST(post(name, body, headers), source(name)), 400, "invalid_event");
    }
  });

  it("answers 400 when the event's name or id could not be stored (too long, NUL)", async () => {
    for (const verdict of [
      { ok: true, id: "d-1", type: "t".repeat(255), data: {} },
      { ok: true, id: "d-1", type: "", data: {} },
      { ok: true, id: "d-1", type: "bad\u0000type", data: {} },
      { ok: true, id: "", type: "thing.done", data: {} },
      { ok: true, id: "i".repeat(256), type: "thing.done", data: {} },
      { ok: true, id: "\ud800", type: "thing.done", data: {} },
      { ok: false, status: 400, reason: "the source says no" },
    ] as InboundVerdict[]) {
      scripted.verdict = verdict;
      await expectRefused(
        fx,
        () => routes.events.POST(post("scripted", "{}"), source("scripted")),
        400,
        "invalid_event",
      );
    }
    scripted.verdict = { ok: false, status: 401, reason: "not ours" };
    const body = await expectRefused(fx, () => routes.events.POST(post("scripted", "{}"), source("scripted")), 401);
    expect(body.error.message).toBe("not ours");
  });
});

describe("POST /api/durable/events/{source}: sources that cannot verify (503, 500)", () => {
  it("answers 503 secret_missing for a listed source with no secret, misconfigured for a bad one", async () => {
    vi.stubEnv("STRIPE_WEBHOOK_SECRET", "");
    const broken = fx.routesWith({
      eventSources: {
        stripe: stripeSource(),
        acme: standardWebhooksSource({ secret: undefined }),
        pasted: stripeSource({ secret: "sk_live_this_is_an_api_key" }),
      },
    });
    const headers = stripeHeaders(stripeEvent);
    for (const [name, code] of [
      ["stripe", "secret_missing"],
      ["acme", "secret_missing"],
      ["pasted", "misconfigured"],
    ] as const) {
      const body = await expectRefused(
        fx,
        () => broken.events.POST(post(name, stripeEvent, headers), source(name)),
        503,
        code,
        broken,
      );
      expect(body.error.message).not.toMatch(/sk_live/);
    }
  });

  it("answers 500 (logged, never leaked) for a source that throws or answers no verdict", async () => {
    const logged: string[] = [];
    const odd = fx.routesWith({
      log: (message) => logged.push(message),
      eventSources: {
        throws: { verify: () => Promise.reject(new Error("provider secret hunter2 broke")) },
        silent: { verify: () => undefined as unknown as InboundVerdict },
      },
    });
    for (const name of ["throws", "silent"]) {
      const body = await expectRefused(fx, () => odd.events.POST(post(name, "{}"), source(name)), 500, "internal", odd);
      expect(body.error.message).toBe("internal error");
    }
    expect(logged.join("\n")).toMatch(/hunter2/);
    expect(logged.join("\n")).toMatch(/answered no verdict/);
  });

  it("refuses eventSources it cannot serve when the routes are built", () => {
    const build = (eventSources: unknown) =>
      createDurableRoutes(async () => fx.durable, { eventSources: eventSources as Record<string, EventSource> });
    expect(() => build({ "my.source": scriptedSource })).toThrow(/letters, digits/);
    expect(() => build({ "": scriptedSource })).toThrow(/letters, digits/);
    expect(() => build({ ok: {} })).toThrow(/no verify/);
    expect(() => build({ ok: null })).toThrow(/no verify/);
    expect(() => build("stripe")).toThrow(/object/);
  });
});
