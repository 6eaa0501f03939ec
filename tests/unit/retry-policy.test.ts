import { describe, expect, it } from "vitest";
import { MAX_DURATION_MS } from "@/lib/durable/duration";
import { InvalidInputError } from "@/lib/durable/errors";
import { canRetry, resolveRetryPolicy, retryDelayMs } from "@/lib/durable/steps/retry-policy";

describe("resolveRetryPolicy", () => {
  it("fills in the documented defaults", () => {
    expect(resolveRetryPolicy({})).toEqual({
      retries: 0,
      retryDelayMs: 1_000,
      factor: 1,
      maxDelayMs: null,
      jitter: false,
    });
  });

  it("converts durations and keeps the given options", () => {
    expect(
      resolveRetryPolicy({ retries: 3, retryDelay: "10s", retryBackoff: { factor: 2, maxDelay: "30s", jitter: true } }),
    ).toEqual({ retries: 3, retryDelayMs: 10_000, factor: 2, maxDelayMs: 30_000, jitter: true });
    expect(resolveRetryPolicy({ retryDelay: 250 }).retryDelayMs).toBe(250);
  });

  it.each([-1, 1.5, NaN, Infinity, "3" as unknown as number])("rejects retries %j", (retries) => {
    expect(() => resolveRetryPolicy({ retries })).toThrow(InvalidInputError);
    expect(() => resolveRetryPolicy({ retries })).toThrow(/retries/);
  });

  it.each([0.5, 0, -2, NaN, Infinity, "2" as unknown as number])("rejects factor %j", (factor) => {
    expect(() => resolveRetryPolicy({ retryBackoff: { factor } })).toThrow(/retryBackoff\.factor/);
    expect(() => resolveRetryPolicy({ retryBackoff: { factor } })).toThrow(InvalidInputError);
  });

  it("rejects malformed durations, naming the option", () => {
    expect(() => resolveRetryPolicy({ retryDelay: "10" })).toThrow(/invalid retryDelay: "10"/);
    expect(() => resolveRetryPolicy({ retryBackoff: { maxDelay: "1w" } })).toThrow(
      /invalid retryBackoff\.maxDelay: "1w"/,
    );
    expect(() => resolveRetryPolicy({ retryDelay: -5 })).toThrow(InvalidInputError);
  });

  it("rejects a non-boolean jitter", () => {
    expect(() => resolveRetryPolicy({ retryBackoff: { jitter: "yes" as unknown as boolean } })).toThrow(
      InvalidInputError,
    );
  });
});

describe("retryDelayMs", () => {
  const policy = resolveRetryPolicy({ retries: 5, retryDelay: "10s", retryBackoff: { factor: 2, maxDelay: "30s" } });

  it("grows by factor^(n-1) and is capped at maxDelay: 10 s, 20 s, 30 s, 30 s", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(policy, n))).toEqual([10_000, 20_000, 30_000, 30_000]);
  });

  it("is constant with the default factor", () => {
    const constant = resolveRetryPolicy({ retries: 3, retryDelay: "2s" });
    expect([1, 2, 3].map((n) => retryDelayMs(constant, n))).toEqual([2_000, 2_000, 2_000]);
  });

  it("rounds fractional growth to whole milliseconds", () => {
    const p = resolveRetryPolicy({ retryDelay: 3, retryBackoff: { factor: 1.5 } });
    expect([1, 2, 3].map((n) => retryDelayMs(p, n))).toEqual([3, 5, 7]); // 3, 4.5, 6.75
  });

  it("caps every delay when maxDelay is below retryDelay", () => {
    const p = resolveRetryPolicy({ retryDelay: "1m", retryBackoff: { maxDelay: "5s" } });
    expect(retryDelayMs(p, 1)).toBe(5_000);
  });

  it("stays finite without maxDelay, however many attempts: at most the longest duration (rule 19)", () => {
    const p = resolveRetryPolicy({ retries: 10_000, retryDelay: "1s", retryBackoff: { factor: 10 } });
    const d = retryDelayMs(p, 5_000);
    expect(Number.isSafeInteger(d)).toBe(true);
    expect(d).toBe(MAX_DURATION_MS);
    const huge = resolveRetryPolicy({ retries: 1, retryDelay: Number.MAX_SAFE_INTEGER });
    expect(retryDelayMs(huge, 1)).toBe(MAX_DURATION_MS);
  });

  it("applies full jitter with the injected random source", () => {
    const jittered = { ...policy, jitter: true };
    expect(retryDelayMs(jittered, 1, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(jittered, 2, () => 0.25)).toBe(5_000);
    expect(retryDelayMs(jittered, 4, () => 0.5)).toBe(15_000); // of the capped 30 s
    expect(retryDelayMs(jittered, 1, () => 0)).toBe(0);
    expect(retryDelayMs(jittered, 1, () => 0.99999)).toBe(9_999);
    expect(retryDelayMs(jittered, 1, () => 1)).toBe(10_000); // never above the capped delay
  });

  it("does not consult random without jitter", () => {
    expect(
      retryDelayMs(policy, 1, () => {
        throw new Error("random called");
      }),
    ).toBe(10_000);
  });

  it("uses Math.random by default when jittering, staying within [0, capped)", () => {
    const jittered = { ...policy, jitter: true };
    for (let i = 0; i < 50; i++) {
      const d = retryDelayMs(jittered, 3);
      expect(Number.isInteger(d) && d >= 0 && d < 30_000).toBe(true);
    }
  });

  it.each([0, -1, 1.5, NaN])("rejects failedAttempt %s as a caller bug", (n) => {
    expect(() => retryDelayMs(policy, n)).toThrow(RangeError);
  });
});

describe("canRetry", () => {
  it("allows retries while failedAttempt <= retries", () => {
    const p = resolveRetryPolicy({ retries: 2 });
    expect(canRetry(p, 1)).toBe(true);
    expect(canRetry(p, 2)).toBe(true);
    expect(canRetry(p, 3)).toBe(false);
  });

  it("never retries with the default of 0 retries", () => {
    expect(canRetry(resolveRetryPolicy({}), 1)).toBe(false);
  });
});
