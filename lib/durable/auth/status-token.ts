import { createHmac } from "node:crypto";

/**
 * A per-run bearer token for the status route: HMAC-SHA256 of the run id under DURABLE_SECRET,
 * base64url. Anyone holding it can read that run's status and nothing else; it needs no storage.
 */
export function statusTokenFor(secret: string, runId: string): string {
  return createHmac("sha256", secret).update(`status\u0000${runId}`).digest("base64url");
}
