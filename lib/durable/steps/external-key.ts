import { createHash } from "node:crypto";

/**
 * The stable idempotency key of a step: `"wfe-"` followed by the first 32 lowercase hex digits of
 * SHA-256 over the UTF-8 bytes of `runId + "\u0000" + stepId`.
 *
 * It depends on nothing but the two ids, so it is the same across replays, processes, redrives
 * (`retry(id)`) and releases, and an operator can derive it without the running process. The NUL
 * separator keeps `("ab", "c")` and `("a", "bc")` apart; ids stored in Postgres cannot contain NUL.
 *
 * @example
 * externalKeyFor("run-1", "step-a"); // "wfe-" + 32 hex digits, same value on every call
 */
export function externalKeyFor(runId: string, stepId: string): string {
  const digest = createHash("sha256").update(`${runId}\u0000${stepId}`, "utf8").digest("hex");
  return `wfe-${digest.slice(0, 32)}`;
}
