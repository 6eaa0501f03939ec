// The three signature schemes POST /api/durable/events/{source} verifies, each against values the
// provider (or its own library) published, not only against our own signer; and each refused when
// one byte of the body, the signature, the timestamp or the id changes.
import { describe, expect, it } from "vitest";
import { parseGithubSecrets, signGithub, verifyGithubSignature } from "@/lib/durable/auth/github-signature";
import {
  parseStripeSecrets,
  signStripe,
  stripeSignatureHeader,
  verifyStripeSignature,
} from "@/lib/durable/auth/stripe-signature";
import { githubSource, standardWebhooksSource, stripeSource } from "@/lib/durable/next";

/** `text` with the character at `index` replaced by the next one in ASCII: one byte changed. */
const oneByteOff = (text: string, index: number) =>
  text.slice(0, index) + String.fromCharCode(text.charCodeAt(index) ^ 1) + text.slice(index + 1);

// GitHub's "Validating webhook deliveries" page, "Testing the webhook payload validation".
const GITHUB = {
  secret: "It's a Secret to Everybody",
  payload: "Hello, World!",
  header: "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
};

describe("GitHub's x-hub-signature-256", () => {
  const secrets = parseGithubSecrets(GITHUB.secret);

  it("reproduces and accepts the documented test values", () => {
    expect(signGithub(GITHUB.secret, GITHUB.payload)).toBe(GITHUB.header);
    expect(verifyGithubSignature(secrets, GITHUB.header, GITHUB.payload)).toEqual({ ok: true });
    expect(verifyGithubSignature(secrets, GITHUB.header, new TextEncoder().encode(GITHUB.payload))).toEqual({
      ok: true,
    });
  });

  it("refuses a body or signature changed by one byte, and a missing or sha1 header", () => {
    for (let i = 0; i < GITHUB.payload.length; i++) {
      expect(verifyGithubSignature(secrets, GITHUB.header, oneByteOff(GITHUB.payload, i)).ok).toBe(false);
    }
    for (let i = "sha256=".length; i < GITHUB.header.length; i++) {
      expect(verifyGithubSignature(secrets, oneByteOff(GITHUB.header, i), GITHUB.payload).ok).toBe(false);
    }
    expect(verifyGithubSignature(secrets, null, GITHUB.payload)).toEqual({ ok: false, reason: "missing_signature" });
    expect(verifyGithubSignature(secrets, GITHUB.header.toUpperCase(), GITHUB.payload).ok).toBe(false);
    expect(verifyGithubSignature(secrets, GITHUB.header.replace("sha256=", "sha1="), GITHUB.payload).ok).toBe(false);
  });

  it("takes a string secret whole, commas included, and a list to rotate", () => {
    expect(parseGithubSecrets("a,b")).toEqual(["a,b"]);
    const withComma = signGithub("a,b", GITHUB.payload);
    expect(verifyGithubSignature(parseGithubSecrets("a,b"), withComma, GITHUB.payload).ok).toBe(true);
    expect(verifyGithubSignature(parseGithubSecrets("a,b"), signGithub("a", GITHUB.payload), GITHUB.payload).ok).toBe(
      false,
    );
    const rotating = parseGithubSecrets(["next-secret", GITHUB.secret]);
    expect(verifyGithubSignature(rotating, GITHUB.header, GITHUB.payload).ok).toBe(true);
    expect(() => parseGithubSecrets("")).toThrow(/empty/);
    expect(() => parseGithubSecrets([])).toThrow(/no secret/);
  });
});

// Made by stripe-node's own `webhooks.generateTestHeaderString({ payload, secret, timestamp })`
// (its test suite's secret and event), which `stripe.webhooks.constructEvent` accepts.
const STRIPE = {
  secret: "whsec_test_secret",
  payload: JSON.stringify({ id: "evt_test_webhook", object: "event" }, null, 2),
  timestamp: 1700000000,
  header: "t=1700000000,v1=4f1cd7feda9826e746b7d482c4badebb657398df1099e1046364f6196a230150",
};

describe("Stripe's stripe-signature", () => {
  const secrets = parseStripeSecrets(STRIPE.secret);
  const verify = (header: string | null = STRIPE.header, body = STRIPE.payload, nowSeconds = STRIPE.timestamp) =>
    verifyStripeSignature({ secrets, header, body, nowSeconds });

  it("reproduces and accepts stripe-node's header: hex HMAC of 't.body' under the whole whsec_ string", () => {
    expect(stripeSignatureHeader(STRIPE.secret, STRIPE.timestamp, STRIPE.payload)).toBe(STRIPE.header);
    expect(verify()).toEqual({ ok: true, timestamp: STRIPE.timestamp });
  });

  it("refuses a body, signature or timestamp changed by one byte", () => {
    for (const i of [0, 5, STRIPE.payload.length - 1])
      expect(verify(STRIPE.header, oneByteOff(STRIPE.payload, i)).ok).toBe(false);
    const at = STRIPE.header.indexOf("v1=") + 3;
    for (const i of [at, at + 31, STRIPE.header.length - 1])
      expect(verify(oneByteOff(STRIPE.header, i))).toEqual({
        ok: false,
        reason: "bad_signature",
      });
    expect(verify(STRIPE.header.replace("t=1700000000", "t=1700000001"))).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("keeps Stripe's tolerance: 300 s old is accepted, 301 s refused; a timestamp ahead is not refused", () => {
    expect(verify(STRIPE.header, STRIPE.payload, STRIPE.timestamp + 300).ok).toBe(true);
    expect(verify(STRIPE.header, STRIPE.payload, STRIPE.timestamp + 301)).toEqual({
      ok: false,
      reason: "stale_timestamp",
    });
    expect(verify(STRIPE.header, STRIPE.payload, STRIPE.timestamp - 3600).ok).toBe(true);
    const tight = verifyStripeSignature({
      secrets,
      header: STRIPE.header,
      body: STRIPE.payload,
      nowSeconds: STRIPE.timestamp + 11,
      toleranceSeconds: 10,
    });
    expect(tight).toEqual({ ok: false, reason: "stale_timestamp" });
  });

  it("accepts any v1 that matches, skips v0, refuses a header with no or two timestamps", () => {
    const sig = STRIPE.header.slice(STRIPE.header.indexOf("v1="));
    expect(verify(`t=${STRIPE.timestamp},v1=${"0".repeat(64)},${sig},v0=abc`).ok).toBe(true);
    expect(verify(`t=${STRIPE.timestamp},v0=${sig.slice(3)}`)).toEqual({ ok: false, reason: "bad_signature" });
    expect(verify(sig)).toEqual({ ok: false, reason: "bad_timestamp" });
    expect(verify(`t=${STRIPE.timestamp},t=${STRIPE.timestamp},${sig}`)).toEqual({
      ok: false,
      reason: "bad_timestamp",
    });
    expect(verify(`t=-1,${sig}`)).toEqual({ ok: false, reason: "bad_timestamp" });
    expect(verify(null)).toEqual({ ok: false, reason: "missing_signature" });
    expect(verify("")).toEqual({ ok: false, reason: "missing_signature" });
  });

  it("rotates over comma-separated whsec_ secrets and refuses anything else as a secret", () => {
    const rotating = parseStripeSecrets(`whsec_next_one, ${STRIPE.secret}`);
    expect(rotating).toEqual(["whsec_next_one", STRIPE.secret]);
    const body = STRIPE.payload;
    expect(
      verifyStripeSignature({ secrets: rotating, header: STRIPE.header, body, nowSeconds: STRIPE.timestamp }).ok,
    ).toBe(true);
    expect(signStripe("whsec_next_one", 1, "x")).not.toBe(signStripe(STRIPE.secret, 1, "x"));
    expect(() => parseStripeSecrets("sk_live_not_a_signing_secret")).toThrow(/whsec_/);
    expect(() => parseStripeSecrets("whsec_")).toThrow(/whsec_/);
    expect(() => parseStripeSecrets(" , ")).toThrow(/no secret/);
  });
});

describe("the built-in sources", () => {
  const delivery = (body: string, headers: Record<string, string>, nowSeconds = STRIPE.timestamp) => ({
    body: new TextEncoder().encode(body),
    headers: new Headers(headers),
    nowSeconds,
  });

  it("stripeSource: the event's id and type, the whole event as data; 400 for JSON without them", async () => {
    // Also made by stripe-node's generateTestHeaderString, over UTF-8 beyond ASCII.
    const payload =
      '{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded",' +
      '"data":{"object":{"id":"pi_1","amount":2000,"description":"café ☕"}}}';
    const header = "t=1700000000,v1=7b35e4842d773abbefd80100d2e82af438b6e69dbdf2ece0d8fd8c1932cb1fb7";
    const source = stripeSource({ secret: STRIPE.secret });
    expect(await source.verify(delivery(payload, { "stripe-signature": header }))).toEqual({
      ok: true,
      id: "evt_1NG8Du2eZvKYlo2CUI79vXWy",
      type: "payment_intent.succeeded",
      data: JSON.parse(payload),
    });
    expect(await source.verify(delivery(STRIPE.payload, { "stripe-signature": STRIPE.header }))).toMatchObject({
      ok: false,
      status: 400,
    });
    expect(await source.verify(delivery(payload, { "stripe-signature": STRIPE.header }))).toMatchObject({
      ok: false,
      status: 401,
      reason: "Stripe signature refused: bad signature",
    });
  });

  it("githubSource: x-github-event and x-github-delivery; a form-encoded payload too", async () => {
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const headers = {
      "x-hub-signature-256": signGithub(GITHUB.secret, body),
      "x-github-event": "push",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    };
    const source = githubSource({ secret: GITHUB.secret });
    expect(await source.verify(delivery(body, headers))).toEqual({
      ok: true,
      id: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      type: "push",
      data: { ref: "refs/heads/main" },
    });
    const form = `payload=${encodeURIComponent(body)}`;
    const formHeaders = {
      ...headers,
      "content-type": "application/x-www-form-urlencoded",
      "x-hub-signature-256": signGithub(GITHUB.secret, form),
    };
    expect(await source.verify(delivery(form, formHeaders))).toMatchObject({
      ok: true,
      data: { ref: "refs/heads/main" },
    });
    const { "x-github-event": _dropped, ...noEvent } = headers;
    expect(await source.verify(delivery(body, noEvent))).toMatchObject({ ok: false, status: 400 });
    expect(
      await source.verify(
        delivery("not json", { ...headers, "x-hub-signature-256": signGithub(GITHUB.secret, "not json") }),
      ),
    ).toMatchObject({ ok: false, status: 400 });
    expect(await source.verify(delivery(`${body} `, headers))).toMatchObject({ ok: false, status: 401 });
  });

  it("standardWebhooksSource: the spec's vector is authentic but has no type (400); a byte off is 401", async () => {
    // The Standard Webhooks specification's test vector (tests/unit/webhook.test.ts).
    const vector = {
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    };
    const source = standardWebhooksSource({ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });
    const body = '{"test": 2432232314}';
    expect(await source.verify(delivery(body, vector, 1614265330))).toEqual({
      ok: false,
      status: 400,
      reason: "the webhook's payload has no type",
    });
    for (const [name, value] of Object.entries(vector)) {
      const changed = { ...vector, [name]: oneByteOff(value, value.length - 2) };
      expect(await source.verify(delivery(body, changed, 1614265330))).toMatchObject({ ok: false, status: 401 });
    }
    expect(await source.verify(delivery(oneByteOff(body, 3), vector, 1614265330))).toMatchObject({ status: 401 });
    expect(await source.verify(delivery(body, vector, 1614265330 + 301))).toMatchObject({
      status: 401,
      reason: "webhook signature refused: stale timestamp",
    });
  });

  it("refuses options a source cannot work with, when it is made", () => {
    expect(() => stripeSource({ toleranceSeconds: 0 })).toThrow(/toleranceSeconds/);
    expect(() => stripeSource({ toleranceSeconds: Number.NaN })).toThrow(/toleranceSeconds/);
    expect(() => standardWebhooksSource({ secret: "whsec_AAAA", toleranceSeconds: -1 })).toThrow(/toleranceSeconds/);
    expect(() => standardWebhooksSource(undefined as never)).toThrow(/secret/);
  });
});
