import { MAX_DURATION_MS, toBoundedMs } from "../duration";
import { InvalidInputError } from "../errors";
import type { Duration, RetryBackoff } from "../types";

export type { RetryBackoff };

/** A validated retry policy, in milliseconds. Plain data: it can be stored and compared. */
export interface RetryPolicy {
  /** Retries after the first attempt; attempts in total are `retries + 1`. */
  retries: number;
  retryDelayMs: number;
  factor: number;
  maxDelayMs: number | null;
  jitter: boolean;
}

/**
 * Validates a step's retry options and fills in the defaults: `retries` 0, `retryDelay` "1s",
 * `factor` 1, no `maxDelay`, no jitter. A `maxDelay` below `retryDelay` is allowed: it caps every
 * delay, the first one included.
 *
 * @throws InvalidInputError when `retries` is not a non-negative integer, a duration is malformed,
 *   `factor` is not a finite number >= 1, or `jitter` is not a boolean
 *
 * @example
 * resolveRetryPolicy({ retries: 3, retryDelay: "10s", retryBackoff: { factor: 2, maxDelay: "30s" } });
 * // { retries: 3, retryDelayMs: 10000, factor: 2, maxDelayMs: 30000, jitter: false }
 */
export function resolveRetryPolicy(opts: {
  retries?: number;
  retryDelay?: Duration;
  retryBackoff?: RetryBackoff;
}): RetryPolicy {
  const { retries = 0, retryDelay = "1s", retryBackoff = {} } = opts;
  const { factor = 1, maxDelay, jitter = false } = retryBackoff;
  if (!Number.isSafeInteger(retries) || retries < 0) {
    throw new InvalidInputError(`invalid retries: ${String(retries)}; expected an integer >= 0`);
  }
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1) {
    throw new InvalidInputError(`invalid retryBackoff.factor: ${String(factor)}; expected a finite number >= 1`);
  }
  if (typeof jitter !== "boolean") {
    throw new InvalidInputError(`invalid retryBackoff.jitter: ${String(jitter)}; expected a boolean`);
  }
  return {
    retries,
    retryDelayMs: toBoundedMs(retryDelay, "retryDelay"),
    factor,
    maxDelayMs: maxDelay === undefined ? null : toBoundedMs(maxDelay, "retryBackoff.maxDelay"),
    jitter,
  };
}

/**
 * The delay before the next attempt after failed attempt `failedAttempt` (1 = the first attempt):
 * `retryDelay × factor^(n−1)`, capped at `maxDelay`, rounded to whole milliseconds. With jitter,
 * full jitter: `Math.floor(random() × capped)`. Pure: it depends only on the policy and the attempt
 * stored in the step row, so every process computes the same delay (the jitter aside).
 * Without `maxDelay`, growth stops at `MAX_DURATION_MS` (1,000 years), so the due time stays one
 * the database stores (docs/rules.md, rule 19).
 *
 * @param random - source of [0, 1) numbers for jitter; injectable for tests
 * @throws RangeError when `failedAttempt` is not an integer >= 1 (a caller bug, not user input)
 *
 * @example
 * const p = resolveRetryPolicy({ retries: 5, retryDelay: "10s", retryBackoff: { factor: 2, maxDelay: "30s" } });
 * [1, 2, 3, 4].map((n) => retryDelayMs(p, n)); // [10000, 20000, 30000, 30000]
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempt: number, random: () => number = Math.random): number {
  if (!Number.isSafeInteger(failedAttempt) || failedAttempt < 1) {
    throw new RangeError(`failedAttempt must be an integer >= 1, got ${String(failedAttempt)}`);
  }
  const grown = policy.retryDelayMs * policy.factor ** (failedAttempt - 1);
  const capped = Math.round(Math.min(grown, policy.maxDelayMs ?? MAX_DURATION_MS, MAX_DURATION_MS));
  if (!policy.jitter) return capped;
  return Math.min(capped, Math.max(0, Math.floor(random() * capped)));
}

/**
 * Whether a step may run again after failed attempt `failedAttempt` (1 = the first attempt):
 * true while `failedAttempt <= retries`.
 *
 * @example
 * canRetry(resolveRetryPolicy({ retries: 2 }), 2); // true: a third attempt is allowed
 * canRetry(resolveRetryPolicy({ retries: 2 }), 3); // false
 */
export function canRetry(policy: RetryPolicy, failedAttempt: number): boolean {
  return failedAttempt <= policy.retries;
}
