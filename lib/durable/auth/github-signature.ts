import { createHmac } from "node:crypto";
import { matchesAnySecret } from "./constant-time";

/**
 * GitHub's webhook signature (docs/guide/provider-webhooks.md, "GitHub"): `x-hub-signature-256` is
 * `sha256=<hex>`, the hex HMAC-SHA256 of the raw body under the webhook's secret as UTF-8 text.
 * GitHub signs no timestamp: a replay is answered by the delivery id (`x-github-delivery`), which
 * the route publishes as the event id, so a delivery seen before starts nothing.
 *
 * A GitHub secret is any text, commas included, so a string is one secret taken whole; rotation
 * is a list (`[next, current]`), never a comma-separated string (a secret cut at a comma would be a
 * shorter key that still verifies).
 */

export function parseGithubSecrets(secret: string | readonly string[]): string[] {
  const secrets = typeof secret === "string" ? [secret] : [...secret];
  if (secrets.length === 0) throw new Error("the GitHub webhook secret lists no secret");
  secrets.forEach((part, index) => {
    if (typeof part !== "string" || part.length === 0) throw new Error(`GitHub webhook secret #${index + 1} is empty`);
  });
  return secrets;
}

/** The `x-hub-signature-256` value for `body` under `secret`: `sha256=<hex>`. */
export function signGithub(secret: string, body: Uint8Array | string): string {
  const mac = createHmac("sha256", Buffer.from(secret, "utf8"));
  mac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return `sha256=${mac.digest("hex")}`;
}

export type GithubVerdict = { ok: true } | { ok: false; reason: "missing_signature" | "bad_signature" };

/** Verifies a GitHub delivery's `x-hub-signature-256` (`header`, null when absent) against its raw body. */
export function verifyGithubSignature(
  secrets: readonly string[],
  header: string | null,
  body: Uint8Array | string,
): GithubVerdict {
  if (!header) return { ok: false, reason: "missing_signature" };
  const expected = secrets.map((secret) => signGithub(secret, body));
  return matchesAnySecret(header, expected) ? { ok: true } : { ok: false, reason: "bad_signature" };
}
