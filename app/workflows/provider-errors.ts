import { FatalStepError, RetryableStepError } from "@/lib/durable";

/**
 * Turns a provider's error into what the step should do with it: a 429 retries after the delay
 * the provider asked for, a permanent 4xx fails the step at once (retrying cannot help), anything
 * else (timeouts, 5xx) is retried by the step's retry policy.
 *
 * @example
 * await ctx.step.run("send", (s) => sendEmail({ ..., idempotencyKey: s.externalKey }).catch(toStepError), {
 *   retries: 5,
 * });
 */
export function toStepError(error: unknown): never {
  const e = error as { name?: string; status?: number; transient?: boolean; retryAfterMs?: number; message?: string };
  if (e?.name === "RateLimitedError" && typeof e.retryAfterMs === "number") {
    throw new RetryableStepError(e.message ?? "rate limited", { retryAfter: e.retryAfterMs, cause: error });
  }
  if (e?.name === "MockProviderError" && e.transient === false) {
    throw new FatalStepError(e.message ?? "refused by the provider", { cause: error });
  }
  throw error;
}
