import * as crypto from "node:crypto";

/**
 * SHA-256 in hex: Node's one-shot `crypto.hash` where it has one (20.12 on; a quarter of
 * createHash's cost), read from the namespace because a named import of it would not link on 20.9.
 */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "hex")
    : (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex");

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
  const digest = sha256Hex(`${runId}\u0000${stepId}`);
  return `wfe-${digest.slice(0, 32)}`;
}
