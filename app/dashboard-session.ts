import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// The dashboard's sign-in with the admin secret (docs/guide/dashboard.md, "Who may operate it").
// The cookie never holds the secret: it is `v1.<expiry ms>.<nonce>.<MAC>`, the MAC an HMAC-SHA256
// of the rest under a key derived from DURABLE_SECRET. So it cannot be made without the secret,
// it ends at its expiry, and rotating the secret signs everyone out. No table: nothing to store.

export const DASHBOARD_COOKIE = "durable_dashboard";
/** How long a sign-in lasts. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

const VALUE = /^v1\.([0-9]{13})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;

/** The admin secret, or null when it is not set (then nobody can sign in). */
export const adminSecret = (): string | null => process.env.DURABLE_SECRET || null;

// A key of its own for the cookie, so a MAC made here is never a status token or a chat id's.
const keyOf = (secret: string) => createHmac("sha256", secret).update("durable-next dashboard session").digest();

const macOf = (secret: string, expires: string, nonce: string) =>
  createHmac("sha256", keyOf(secret)).update(`v1.${expires}.${nonce}`).digest("base64url");

/** A new signed session value, good until `now + SESSION_MS`. */
export function newSessionValue(secret: string, now = Date.now()): string {
  const expires = String(now + SESSION_MS);
  const nonce = randomBytes(12).toString("base64url");
  return `v1.${expires}.${nonce}.${macOf(secret, expires, nonce)}`;
}

/** Whether `value` is a session this secret signed that has not expired (constant time in the MAC). */
export function isValidSession(value: string | undefined, secret: string, now = Date.now()): boolean {
  const match = value ? VALUE.exec(value) : null;
  if (!match) return false;
  const [, expires, nonce, mac] = match as unknown as [string, string, string, string];
  const expected = Buffer.from(macOf(secret, expires, nonce));
  const given = Buffer.from(mac);
  return expected.length === given.length && timingSafeEqual(expected, given) && Number(expires) > now;
}

/** Whether the typed secret is the admin secret: both hashed first, so the time tells neither content nor length. */
export function isAdminSecret(given: string, secret: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(secret, "utf8").digest();
  return timingSafeEqual(a, b);
}
