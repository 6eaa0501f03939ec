import { describe, expect, it } from "vitest";
import { toMs } from "@/lib/durable/duration";
import { InvalidInputError } from "@/lib/durable/errors";

describe("toMs", () => {
  it.each([
    ["250ms", 250],
    ["1.5s", 1_500],
    ["30s", 30_000],
    ["5m", 300_000],
    ["24h", 86_400_000],
    ["7d", 604_800_000],
    ["0s", 0],
    ["0ms", 0],
    ["1.5ms", 2],
    ["0.4ms", 0],
    ["0.001s", 1],
  ] as const)("parses %s as %d ms", (input, ms) => {
    expect(toMs(input)).toBe(ms);
  });

  it("takes a finite non-negative number as milliseconds, rounded to an integer", () => {
    expect(toMs(0)).toBe(0);
    expect(toMs(1234)).toBe(1234);
    expect(toMs(1.6)).toBe(2);
    expect(toMs(1.4)).toBe(1);
    expect(Object.is(toMs(-0), 0)).toBe(true);
  });

  it.each([
    "",
    "10",
    "5 m",
    " 5m",
    "5m ",
    "-1s",
    "+1s",
    "1w",
    "5M",
    "1S",
    "1.s",
    ".5s",
    "1e3ms",
    "s",
    "1m30s",
    "Infinityms",
    "NaNs",
  ])("rejects the string %j", (input) => {
    expect(() => toMs(input)).toThrow(InvalidInputError);
  });

  it.each([NaN, Infinity, -Infinity, -1, -0.5])("rejects the number %s", (input) => {
    expect(() => toMs(input)).toThrow(InvalidInputError);
  });

  it("rejects values that are not durations at all (untyped callers)", () => {
    for (const bad of [null, undefined, true, {}, [], 10n]) {
      expect(() => toMs(bad as never)).toThrow(InvalidInputError);
    }
  });

  it("rejects a duration too large to be a safe integer of milliseconds", () => {
    expect(() => toMs(`${"9".repeat(400)}d`)).toThrow(InvalidInputError);
    expect(() => toMs(2 ** 60)).toThrow(InvalidInputError);
    expect(toMs(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("names what the duration is for, the bad value and the accepted form", () => {
    let caught: unknown;
    try {
      toMs("5 m", "retryDelay");
    } catch (e) {
      caught = e;
    }
    expect(InvalidInputError.is(caught)).toBe(true);
    const err = caught as InvalidInputError;
    expect(err.code).toBe("invalid_input");
    expect(err.message).toContain("retryDelay");
    expect(err.message).toContain('"5 m"');
    expect(err.message).toMatch(/ms, s, m, h or d/);
    expect(err.message).toContain('"30s"');
  });

  it("shows non-string bad values readably", () => {
    expect(() => toMs(-1, "lease")).toThrow(/invalid lease: -1;/);
    expect(() => toMs(NaN, "timeout")).toThrow(/invalid timeout: NaN;/);
    expect(() => toMs(null as never)).toThrow(/invalid duration: null;/);
  });
});
