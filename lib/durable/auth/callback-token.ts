import { createHmac, randomBytes } from "node:crypto";
import { secretsEqual } from "./constant-time";

/**
 * Callback URL tokens (docs/guide/composition.md, "Callback URLs"): `<id>.<mac>`, where `id` is 16
 * random bytes (base64url; the callback's row binds it to its run and step) and `mac` the first
 * 16 bytes of HMAC-SHA256 over it under DURABLE_SECRET. The token says nothing about the run; it
 * cannot be guessed (128 random bits) nor made for an id without the secret (the MAC), and a
 * forged one is refused before any database read. Only the id is stored: the token is derived
 * again from it and the secret whenever the run replays.
 */
export function newCallbackId(): string {
  return randomBytes(16).toString("base64url");
}

export function callbackTokenFor(secret: string, callbackId: string): string {
  return `${callbackId}.${macOf(secret, callbackId)}`;
}

/** The callback id a token carries when its MAC is right; null for anything else. */
export function callbackIdOf(secret: string, token: unknown): string | null {
  if (typeof token !== "string" || token.length > 100) return null;
  const match = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!match) return null;
  const [, id, mac] = match;
  return secretsEqual(mac!, macOf(secret, id!)) ? id! : null;
}

function macOf(secret: string, callbackId: string): string {
  return createHmac("sha256", secret)
    .update(`callback\u0000${callbackId}`)
    .digest()
    .subarray(0, 16)
    .toString("base64url");
}
