import { createHmac } from "node:crypto";
import { matchesAnySecret } from "./constant-time";

/**
 * Stripe's webhook signature (docs/guide/provider-webhooks.md, "Stripe"): the `stripe-signature`
 * header is `t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]`, each `v1` the hex HMAC-SHA256 of
 * `${t}.${body}` under the endpoint's signing secret, the whole `whsec_…` string as the key (not
 * its base64 decoded, as Standard Webhooks would). A delivery is authentic when any `v1` matches
 * under any of our secrets (rotation) and it is not older than the tolerance: 300 s by default, as
 * Stripe's libraries. Like them, a timestamp ahead of our clock is not refused: only Stripe can sign
 * one, and a replay is always older.
 */

/** Stripe's default tolerance, in seconds. */
export const STRIPE_TOLERANCE_SECONDS = 300;

/**
 * The signing secrets of `secret` (comma-separated, or a list), each a `whsec_…` string. Anything
 * else is a configuration error: a secret split wrong would be a shorter key that still verifies.
 */
export function parseStripeSecrets(secret: string | readonly string[]): string[] {
  const secrets = (typeof secret === "string" ? secret.split(",") : [...secret]).map((part) => part.trim());
  const kept = secrets.filter((part) => part.length > 0);
  if (kept.length === 0) throw new Error("the Stripe signing secret lists no secret");
  kept.forEach((part, index) => {
    if (!/^whsec_[\x21-\x7e]+$/.test(part)) {
      throw new Error(`Stripe signing secret #${index + 1} is not "whsec_" followed by the rest of the secret`);
    }
  });
  return kept;
}

/** The hex HMAC-SHA256 of `${timestamp}.${body}` under `secret`: one `v1` value. */
export function signStripe(secret: string, timestamp: number | string, body: Uint8Array | string): string {
  const mac = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.`, "utf8");
  mac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return mac.digest("hex");
}

/** A whole `stripe-signature` header for `body`, as Stripe sends it (tests, local tools). */
export const stripeSignatureHeader = (secret: string, timestamp: number, body: Uint8Array | string) =>
  `t=${timestamp},v1=${signStripe(secret, timestamp, body)}`;

export type StripeVerdict =
  | { ok: true; timestamp: number }
  | { ok: false; reason: "missing_signature" | "bad_timestamp" | "stale_timestamp" | "bad_signature" };

export interface VerifyStripeRequest {
  secrets: readonly string[];
  /** The `stripe-signature` header (null when absent). */
  header: string | null;
  /** The raw body exactly as received: the signature covers its bytes. */
  body: Uint8Array | string;
  /** Our clock in seconds. */
  nowSeconds: number;
  toleranceSeconds?: number;
}

/** The header's one timestamp and its `v1` signatures; null when it has no timestamp or more than one. */
function parseHeader(header: string): { timestamp: string; signatures: string[] } | null {
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const item of header.split(",")) {
    const at = item.indexOf("=");
    const key = at < 0 ? item : item.slice(0, at);
    const value = at < 0 ? "" : item.slice(at + 1);
    if (key === "t") timestamps.push(value);
    if (key === "v1") signatures.push(value);
  }
  return timestamps.length === 1 ? { timestamp: timestamps[0]!, signatures } : null;
}

/** Verifies a Stripe delivery's `stripe-signature` against its raw body. */
export function verifyStripeSignature(request: VerifyStripeRequest): StripeVerdict {
  if (!request.header) return { ok: false, reason: "missing_signature" };
  const parsed = parseHeader(request.header);
  if (parsed === null || !/^\d{1,12}$/.test(parsed.timestamp)) return { ok: false, reason: "bad_timestamp" };
  const expected = request.secrets.map((secret) => signStripe(secret, parsed.timestamp, request.body));
  let matched = false;
  for (const signature of parsed.signatures) matched = matchesAnySecret(signature, expected) || matched;
  if (!matched) return { ok: false, reason: "bad_signature" };
  const timestamp = Number(parsed.timestamp);
  if (request.nowSeconds - timestamp > (request.toleranceSeconds ?? STRIPE_TOLERANCE_SECONDS)) {
    return { ok: false, reason: "stale_timestamp" };
  }
  return { ok: true, timestamp };
}
