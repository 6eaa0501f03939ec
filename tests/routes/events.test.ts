// POST /api/durable/events/{source}: authentic deliveries through the real route over PGlite, each
// published as `<source>.<type>` with the provider's delivery id as the event id; a redelivery
// answers the same and changes nothing (tests/routes/harness.ts, fingerprint). The refusals are
// tests/routes/events-refusals.test.ts.
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow } from "@/lib/durable";
import { signGithub } from "@/lib/durable/auth/github-signature";
import { stripeSignatureHeader } from "@/lib/durable/auth/stripe-signature";
import { signWebhook } from "@/lib/durable/auth/webhook";
import { createDurableRoutes, githubSource, standardWebhooksSource, stripeSource } from "@/lib/durable/next";
import { scanForPlaintext } from "../helpers/plaintext-scan";
import { createFixture, expectRefused, fingerprint, type RouteFixture, url, whsec } from "./harness";

const STRIPE_SECRET = "whsec_route_tests_stripe_secret";
const GITHUB_SECRET = "route tests, github secret";
const ACME_KEY = Buffer.from("route-tests-acme-standard-webhooks");

const invoicePaid = defineWorkflow({
  name: "invoice-paid",
  on: "stripe.invoice.paid",
  input: z.object({ id: z.string(), data: z.object({ object: z.object({ amount_paid: z.number().int() }) }) }),
  async run(ctx, event) {
    return ctx.step.run("book", () => ({ event: event.id, booked: event.data.object.amount_paid }));
  },
});
const onPush = defineWorkflow({
  name: "on-push",
  on: { event: "github.push", match: { ref: "refs/heads/main" } },
  input: z.object({ ref: z.string() }),
  async run(ctx, push) {
    return ctx.step.run("deploy", () => `deployed ${push.ref}`);
  },
});
const acmeInvoice = defineWorkflow({
  name: "acme-invoice",
  on: "acme.invoice.paid",
  input: z.object({ type: z.string(), data: z.object({ total: z.number() }) }),
  async run(ctx, payload) {
    return ctx.step.value("total", () => payload.data.total);
  },
});

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture(
    {
      eventSources: {
        stripe: stripeSource({ secret: STRIPE_SECRET }),
        github: githubSource({ secret: GITHUB_SECRET }),
        acme: standardWebhooksSource({ secret: whsec(ACME_KEY) }),
      },
    },
    [invoicePaid, onPush, acmeInvoice],
  );
});
afterAll(() => fx.durable.close());

const source = (name: string) => ({ params: Promise.resolve({ source: name }) });
const post = (name: string, body: string, headers: Record<string, string>) =>
  fx.routes.events.POST(
    new Request(url(`/events/${name}`), {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    }),
    source(name),
  );
const now = () => Math.floor(Date.now() / 1000);
const stripeDelivery = (body: string, timestamp = now()) =>
  post("stripe", body, { "stripe-signature": stripeSignatureHeader(STRIPE_SECRET, timestamp, body) });
const invoice = (id: string, amount: number) =>
  JSON.stringify({
    id,
    object: "event",
    type: "invoice.paid",
    data: { object: { id: `in_${id}`, amount_paid: amount } },
  });

const storedEvent = async (id: string) =>
  (
    await sql<{
      name: string;
      source: string | null;
    }>`select name, source from durable_app_events where id = ${id}`.execute(fx.db)
  ).rows[0];

describe("POST /api/durable/events/stripe", () => {
  it("publishes stripe.<type> under the event's id, starts the subscriber on the event and advances it", async () => {
    const body = invoice("evt_paid_1", 4200);
    const response = await stripeDelivery(body);
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer).toEqual({
      ok: true,
      event: "stripe.invoice.paid",
      eventId: "evt_paid_1",
      runs: [{ workflow: "invoice-paid", id: expect.any(String) }],
    });
    expect(await storedEvent("evt_paid_1")).toEqual({ name: "stripe.invoice.paid", source: "stripe" });
    await fx.routes.idle();
    const status = await fx.durable.status(answer.runs[0].id);
    // The run's input was the event: its id and its amount are what the body read from it.
    expect(status).toMatchObject({ status: "completed", output: { event: "evt_paid_1", booked: 4200 } });
  });

  it("answers a redelivery (Stripe signs each attempt anew) with the same 200 and changes nothing", async () => {
    const body = invoice("evt_paid_2", 10);
    const first = await (await stripeDelivery(body, now() - 60)).json();
    await fx.routes.idle();
    const before = await fingerprint(fx.db);
    for (const timestamp of [now() - 30, now()]) {
      const again = await stripeDelivery(body, timestamp);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual(first);
      await fx.routes.idle();
    }
    expect(await fingerprint(fx.db)).toEqual(before);
  });

  it("stores an event nothing subscribes to, and starts no run", async () => {
    const body = JSON.stringify({ id: "evt_nobody", object: "event", type: "customer.created", data: { object: {} } });
    const response = await stripeDelivery(body);
    expect(await response.json()).toEqual({
      ok: true,
      event: "stripe.customer.created",
      eventId: "evt_nobody",
      runs: [],
    });
    expect(await storedEvent("evt_nobody")).toEqual({ name: "stripe.customer.created", source: "stripe" });
  });

  it("answers 422 when a subscriber's input schema refuses the event, and publishes nothing", async () => {
    const body = invoice("evt_bad_amount", 1.5);
    const refused = await expectRefused(fx, () => stripeDelivery(body), 422, "invalid_input");
    expect(refused.error.message).toMatch(/invoice-paid/);
    expect(await storedEvent("evt_bad_amount")).toBeUndefined();
  });
});

describe("POST /api/durable/events/github and a Standard Webhooks source", () => {
  const push = (ref: string, delivery: string) => {
    const body = JSON.stringify({ ref, after: "9f2c1e" });
    return post("github", body, {
      "x-hub-signature-256": signGithub(GITHUB_SECRET, body),
      "x-github-event": "push",
      "x-github-delivery": delivery,
    });
  };

  it("publishes github.<x-github-event> under x-github-delivery; match picks the subscriber's pushes", async () => {
    const main = await (await push("refs/heads/main", "0b1c7a40-0000-4000-8000-00000000000a")).json();
    expect(main).toMatchObject({ event: "github.push", eventId: "0b1c7a40-0000-4000-8000-00000000000a" });
    expect(main.runs).toEqual([{ workflow: "on-push", id: expect.any(String) }]);
    const branch = await (await push("refs/heads/topic", "0b1c7a40-0000-4000-8000-00000000000b")).json();
    expect(branch.runs).toEqual([]);
    await fx.routes.idle();
    expect(await fx.durable.status(main.runs[0].id)).toMatchObject({
      status: "completed",
      output: "deployed refs/heads/main",
    });
    // Redelivered from GitHub's settings page: the same delivery id, nothing new.
    const before = await fingerprint(fx.db);
    expect(await (await push("refs/heads/main", "0b1c7a40-0000-4000-8000-00000000000a")).json()).toEqual(main);
    await fx.routes.idle();
    expect(await fingerprint(fx.db)).toEqual(before);
  });

  it("publishes <source>.<payload type> under webhook-id for a Standard Webhooks sender", async () => {
    const body = JSON.stringify({ type: "invoice.paid", timestamp: "2026-12-04T00:00:00Z", data: { total: 99 } });
    const send = () => {
      const timestamp = now();
      return post("acme", body, {
        "webhook-id": "msg_acme_1",
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook(ACME_KEY, "msg_acme_1", timestamp, body),
      });
    };
    const answer = await (await send()).json();
    expect(answer).toMatchObject({ event: "acme.invoice.paid", eventId: "msg_acme_1" });
    await fx.routes.idle();
    expect(await fx.durable.status(answer.runs[0].id)).toMatchObject({ status: "completed", output: 99 });
    expect(await (await send()).json()).toEqual(answer);
  });
});

describe("POST /api/durable/events/{source}: one id, two events", () => {
  it("answers 409 for a delivery whose id an event of another name holds, and changes nothing", async () => {
    const first = await stripeDelivery(invoice("shared-id-1", 5));
    expect(first.status).toBe(200);
    await fx.routes.idle();
    const body = JSON.stringify({ type: "invoice.paid", data: { total: 1 } });
    const timestamp = now();
    const headers = {
      "webhook-id": "shared-id-1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(ACME_KEY, "shared-id-1", timestamp, body),
    };
    const refused = await expectRefused(fx, () => post("acme", body, headers), 409, "run_state_conflict");
    expect(refused.error.message).toMatch(/stripe\.invoice\.paid/);
  });
});

describe("POST /api/durable/events/{source} on an instance that encrypts", () => {
  it("stores the delivery's data and the run's input sealed, and the run reads them plain", async () => {
    const db = await connect("memory://");
    const key = { id: "k1", secret: randomBytes(32).toString("base64") };
    const durable = createDurable({ db, workflows: [invoicePaid], encryption: { keys: [key] }, log: () => {} });
    try {
      await durable.migrate();
      const routes = createDurableRoutes(async () => durable, {
        log: () => {},
        secrets: { durable: "d", cron: "c" },
        eventSources: { stripe: stripeSource({ secret: STRIPE_SECRET }) },
      });
      const marker = `CARDHOLDERmark${randomBytes(6).toString("hex")}`;
      const body = JSON.stringify({
        id: "evt_sealed",
        type: "invoice.paid",
        data: { object: { amount_paid: 7, customer_name: marker } },
      });
      const headers = { "stripe-signature": stripeSignatureHeader(STRIPE_SECRET, now(), body) };
      const response = await routes.events.POST(
        new Request(url("/events/stripe"), { method: "POST", headers, body }),
        source("stripe"),
      );
      const answer = await response.json();
      expect(answer.runs).toHaveLength(1);
      await routes.idle();
      expect(await durable.status(answer.runs[0].id)).toMatchObject({ output: { event: "evt_sealed", booked: 7 } });
      expect(await scanForPlaintext(db, [marker])).toEqual([]);
    } finally {
      await durable.close();
    }
  });
});
