import { createHmac } from "node:crypto";
import { matchesAnySecret } from "./constant-time";

/**
 * Standard Webhooks (https://www.standardwebhooks.com) signature verification, symmetric `v1`.
 *
 * The sender signs `${webhook-id}.${webhook-timestamp}.${body}` with HMAC-SHA256 under a key given
 * as `whsec_<base64>`, and sends `webhook-signature: v1,<base64> [v1,<base64> …]`. We accept when
 * any listed signature matches under any of our keys (DURABLE_SIGNAL_SECRET is comma-separated so
 * a key can be rotated without downtime) and the timestamp is within ±5 minutes of our clock.
 *
 * Written here on node:crypto rather than with the `standardwebhooks` package: that package takes
 * one key (rotation would mean one instance per key), reads `Date.now()` with no way to inject a
 * clock (the spec's test vector is from 2021), and JSON-parses the body itself, which would turn
 * our "400 invalid JSON" into a verification failure.
 */

/** The spec's replay window: a timestamp further than this from now is refused. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Parses `whsec_<base64>[,whsec_<base64>…]` into key bytes; a malformed key is a configuration error. */
export function parseWebhookSecrets(secret: string): Buffer[] {
  const keys = secret
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (keys.length === 0) throw new Error("the webhook secret lists no key");
  return keys.map((key, index) => {
    const encoded = key.startsWith("whsec_") ? key.slice("whsec_".length) : key;
    const bytes = BASE64.test(encoded) ? Buffer.from(encoded, "base64") : Buffer.alloc(0);
    // An empty key would let anyone sign: refuse it rather than accept everything.
    if (bytes.length === 0) throw new Error(`webhook key #${index + 1} is not "whsec_" followed by base64`);
    return bytes;
  });
}

/** The `webhook-signature` entry for one key: `v1,<base64 HMAC-SHA256>`. */
export function signWebhook(
  key: Uint8Array,
  id: string,
  timestamp: number | string,
  body: Uint8Array | string,
): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8");
  mac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return `v1,${mac.digest("base64")}`;
}

export type WebhookVerdict =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: "missing_headers" | "bad_timestamp" | "stale_timestamp" | "bad_signature" };

export interface VerifyWebhookRequest {
  keys: readonly Uint8Array[];
  headers: Headers;
  /** The raw body exactly as received: the signature covers its bytes. */
  body: Uint8Array | string;
  /** Our clock in seconds (defaults to now). */
  nowSeconds?: number;
  toleranceSeconds?: number;
}

/** Verifies a delivery's `webhook-id`, `webhook-timestamp` and `webhook-signature` against `body`. */
export function verifyWebhook(request: VerifyWebhookRequest): WebhookVerdict {
  const id = request.headers.get("webhook-id");
  const timestamp = request.headers.get("webhook-timestamp");
  const signatures = request.headers.get("webhook-signature");
  if (!id || !timestamp || !signatures) return { ok: false, reason: "missing_headers" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "bad_timestamp" };
  const seconds = Number(timestamp);
  const now = request.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - seconds) > (request.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    return { ok: false, reason: "stale_timestamp" };
  }
  const expected = request.keys.map((key) => signWebhook(key, id, timestamp, request.body));
  // Entries are space-separated; other versions (e.g. asymmetric "v1a,") are not ours and skipped.
  let matched = false;
  for (const entry of signatures.split(" ")) {
    if (entry.startsWith("v1,")) matched = matchesAnySecret(entry, expected) || matched;
  }
  return matched ? { ok: true, id, timestamp: seconds } : { ok: false, reason: "bad_signature" };
}
