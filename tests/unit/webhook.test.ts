import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { matchesAnySecret, secretsEqual } from "@/lib/durable/auth/constant-time";
import { parseWebhookSecrets, signWebhook, verifyWebhook } from "@/lib/durable/auth/webhook";

// The Standard Webhooks specification's published test vector: matching it is what makes our
// verifier agree with every sender that follows the spec, not merely with our own signer.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

const headers = (over: Record<string, string | undefined> = {}) => {
  const all: Record<string, string | undefined> = {
    "webhook-id": VECTOR.id,
    "webhook-timestamp": String(VECTOR.timestamp),
    "webhook-signature": VECTOR.signature,
    ...over,
  };
  return new Headers(Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined));
};
const keys = parseWebhookSecrets(VECTOR.secret);
const verify = (
  over: Record<string, string | undefined> = {},
  body: string | Uint8Array = VECTOR.body,
  nowSeconds = VECTOR.timestamp,
) => verifyWebhook({ keys, headers: headers(over), body, nowSeconds });

describe("Standard Webhooks verification", () => {
  it("reproduces and accepts the specification's test vector", () => {
    expect(signWebhook(keys[0]!, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    expect(verify()).toEqual({ ok: true, id: VECTOR.id, timestamp: VECTOR.timestamp });
    expect(verify({}, new TextEncoder().encode(VECTOR.body)).ok).toBe(true);
  });

  it("refuses a body, id or timestamp changed by one character", () => {
    expect(verify({}, '{"test": 2432232315}')).toEqual({ ok: false, reason: "bad_signature" });
    expect(verify({ "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJeK" }).ok).toBe(false);
    expect(verify({ "webhook-timestamp": String(VECTOR.timestamp + 1) }).ok).toBe(false);
  });

  it("accepts when any one of several signatures matches, and skips other versions", () => {
    expect(verify({ "webhook-signature": `v1,Zm9vYmFy ${VECTOR.signature}` }).ok).toBe(true);
    expect(verify({ "webhook-signature": `v1a,${VECTOR.signature.slice(3)} ${VECTOR.signature}` }).ok).toBe(true);
    expect(verify({ "webhook-signature": `v2,${VECTOR.signature.slice(3)}` }).ok).toBe(false);
    expect(verify({ "webhook-signature": "v1,Zm9vYmFy v1,YmFyYmF6" }).ok).toBe(false);
  });

  it("refuses bad base64 and a signature without its version", () => {
    expect(verify({ "webhook-signature": "v1,!!!not-base64!!!" }).ok).toBe(false);
    expect(verify({ "webhook-signature": VECTOR.signature.slice(3) }).ok).toBe(false);
    expect(verify({ "webhook-signature": `${VECTOR.signature}AA` }).ok).toBe(false);
  });

  it("refuses every missing header", () => {
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      expect(verify({ [name]: undefined })).toEqual({ ok: false, reason: "missing_headers" });
    }
  });

  it("keeps a ±300 s window and refuses what is outside it or not a number", () => {
    expect(verify({}, VECTOR.body, VECTOR.timestamp + 300).ok).toBe(true);
    expect(verify({}, VECTOR.body, VECTOR.timestamp - 300).ok).toBe(true);
    expect(verify({}, VECTOR.body, VECTOR.timestamp + 301)).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(verify({}, VECTOR.body, VECTOR.timestamp - 301)).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(verify({ "webhook-timestamp": "1614265330.0" })).toEqual({ ok: false, reason: "bad_timestamp" });
    expect(verify({ "webhook-timestamp": "-1" })).toEqual({ ok: false, reason: "bad_timestamp" });
  });

  it("tries every key of a comma-separated secret (rotation)", () => {
    const other = `whsec_${Buffer.from("another-key-another-key-another!").toString("base64")}`;
    const rotating = parseWebhookSecrets(`${other}, ${VECTOR.secret}`);
    expect(rotating).toHaveLength(2);
    expect(
      verifyWebhook({ keys: rotating, headers: headers(), body: VECTOR.body, nowSeconds: VECTOR.timestamp }).ok,
    ).toBe(true);
    const removed = parseWebhookSecrets(other);
    expect(
      verifyWebhook({ keys: removed, headers: headers(), body: VECTOR.body, nowSeconds: VECTOR.timestamp }).ok,
    ).toBe(false);
  });

  it("accepts a key pasted without its whsec_ prefix and refuses malformed or empty keys", () => {
    expect(parseWebhookSecrets(VECTOR.secret.slice("whsec_".length))[0]).toEqual(keys[0]);
    expect(() => parseWebhookSecrets("whsec_")).toThrow(/not "whsec_" followed by base64/);
    expect(() => parseWebhookSecrets("whsec_not base64!")).toThrow();
    expect(() => parseWebhookSecrets(" , ")).toThrow(/no key/);
  });
});

describe("constant-time comparison", () => {
  it("compares equal and unequal secrets of any lengths", () => {
    expect(secretsEqual("s3cret", "s3cret")).toBe(true);
    expect(secretsEqual("s3cret", "s3cre")).toBe(false);
    expect(secretsEqual("", "s3cret")).toBe(false);
    expect(secretsEqual("s3creT", "s3cret")).toBe(false);
    expect(matchesAnySecret("b", ["a", "b", "c"])).toBe(true);
    expect(matchesAnySecret("d", ["a", "b", "c"])).toBe(false);
    expect(matchesAnySecret("a", [])).toBe(false);
  });

  it("is the only place the engine compares secrets with timingSafeEqual", () => {
    const dir = path.join(__dirname, "../../lib/durable");
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((file) => /\.tsx?$/.test(file));
    const users = files.filter((file) => /timingSafeEqual/.test(readFileSync(path.join(dir, file), "utf8")));
    expect(users).toEqual(["auth/constant-time.ts"]);
  });
});
