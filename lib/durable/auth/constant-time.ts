import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The one comparison of secrets (bearer tokens, status tokens, webhook signatures): constant time
 * in the content, and in the length too. Both sides are hashed first, so neither an early mismatch
 * nor a length difference changes how long it takes (timingSafeEqual alone throws on unequal
 * lengths, which leaks the length of the secret).
 */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  // Equal SHA-256 digests of unequal strings would be a collision: the length check only guards
  // against that, it is never what decides in practice.
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/**
 * True when `given` equals any of `candidates`. Every candidate is compared (no early exit), so
 * the time does not tell which one matched, or whether any did.
 */
export function matchesAnySecret(given: string, candidates: readonly string[]): boolean {
  let matched = false;
  for (const candidate of candidates) matched = secretsEqual(given, candidate) || matched;
  return matched;
}
