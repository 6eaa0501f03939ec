// A property fuzz of POST /api/durable/events/{source} over the source's name, the event's id,
// type and data, and whether (and how) it is signed: never a 5xx, a 4xx never changes the database,
// and a 200 answered again for the same delivery is the same answer and changes nothing.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
import { signGithub } from "@/lib/durable/auth/github-signature";
import { stripeSignatureHeader } from "@/lib/durable/auth/stripe-signature";
import { signWebhook } from "@/lib/durable/auth/webhook";
import { githubSource, standardWebhooksSource, stripeSource } from "@/lib/durable/next";
import { createFixture, fingerprint, type RouteFixture, url, whsec } from "./harness";

const STRIPE_SECRET = "whsec_fuzz_stripe";
const GITHUB_SECRET = "fuzz github";
const ACME_KEY = Buffer.from("fuzz-acme-standard-webhooks-key!");

// A subscriber with a schema, so some events are refused by it (422).
const paid = defineWorkflow({
  name: "fuzz-paid",
  on: "stripe.invoice.paid",
  input: z.object({ data: z.object({ amount: z.number().int() }) }),
  run: async (ctx, input) => ctx.step.value("amount", () => input.data.amount),
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
    [paid],
  );
});
afterAll(() => fx.durable.close());

const nasty = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "\ud800",
  "'; drop table durable_runs; --",
  "🙂",
  "x".repeat(300),
  "__proto__",
);
// Fresh ids mostly, and some that repeat: an id published before under another name is a 409.
const id = fc.oneof(
  { arbitrary: fc.uuid(), weight: 4 },
  fc.constantFrom("evt_1", "evt_2", "d-1"),
  nasty,
  fc.string({ maxLength: 12 }),
);
const type = fc.oneof({ arbitrary: fc.constantFrom("invoice.paid", "push", "customer.created"), weight: 4 }, nasty);
const data = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.record({ amount: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 4 })) }),
);

/** One delivery, signed for its source by `how`: right, with another secret, stale, or not at all. */
function delivery(source: string, event: { id: unknown; type: unknown; data: unknown }, how: number, raw?: string) {
  const body = raw ?? JSON.stringify(event);
  const now = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const delivered = typeof event.id === "string" ? event.id : "none";
  if (source === "stripe" && how < 3) {
    const secret = how === 1 ? "whsec_other" : STRIPE_SECRET;
    headers["stripe-signature"] = stripeSignatureHeader(secret, how === 2 ? now - 400 : now, body);
  }
  if (source === "github" && how < 3) {
    headers["x-hub-signature-256"] = signGithub(how === 1 ? "other" : GITHUB_SECRET, body);
    headers["x-github-delivery"] = delivered.replace(/[^\x20-\x7e]/g, "?") || "d";
    headers["x-github-event"] = typeof event.type === "string" ? event.type.replace(/[^\x20-\x7e]/g, "?") || "t" : "t";
  }
  if (source === "acme" && how < 3) {
    const msg = delivered.replace(/[^\x21-\x7e]/g, "?") || "m";
    const ts = how === 2 ? now - 400 : now;
    headers["webhook-id"] = msg;
    headers["webhook-timestamp"] = String(ts);
    headers["webhook-signature"] = signWebhook(how === 1 ? Buffer.from("other-key") : ACME_KEY, msg, ts, body);
  }
  // The handler reads the source from its params (Next.js decodes the path segment): the URL is for show.
  return new Request(url("/events/fuzzed"), { method: "POST", headers, body });
}

describe("events route property fuzz", () => {
  it("never answers 5xx, changes nothing on a 4xx, and answers a repeated 200 alike", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          source: fc.oneof({ arbitrary: fc.constantFrom("stripe", "github", "acme"), weight: 6 }, nasty),
          event: fc.record({ id, type, data }),
          // Mostly signed right, so the fuzz gets past 401 often.
          how: fc.integer({ min: 0, max: 5 }).map((n) => (n < 3 ? 0 : n - 2)),
          raw: fc.option(fc.string({ maxLength: 30 }), { freq: 6 }),
        }),
        async ({ source, event, how, raw }) => {
          const params = { params: Promise.resolve({ source }) };
          const before = await fingerprint(fx.db);
          const response = await fx.routes.events.POST(delivery(source, event, how, raw ?? undefined), params);
          await fx.routes.idle();
          seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
          expect(response.status, `${source} ${JSON.stringify(event).slice(0, 120)}`).toBeLessThan(500);
          const answer = await response.json();
          if (response.status >= 400) {
            expect(
              Object.keys(answer.error)
                .filter((key) => key !== "issues")
                .sort(),
            ).toEqual(["code", "message"]);
            expect(await fingerprint(fx.db)).toEqual(before);
            return;
          }
          const settled = await fingerprint(fx.db);
          const again = await fx.routes.events.POST(delivery(source, event, how, raw ?? undefined), params);
          await fx.routes.idle();
          expect(await again.json()).toEqual(answer);
          expect(await fingerprint(fx.db)).toEqual(settled);
        },
      ),
      { numRuns: 200, seed: Number(process.env.FUZZ_SEED ?? 20261204) },
    );
    expect([...seen.keys()]).toEqual(expect.arrayContaining([200, 400, 401, 404, 422]));
  }, 120_000);
});
