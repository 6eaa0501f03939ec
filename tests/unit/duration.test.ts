import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  MAX_DURATION_MS,
  MAX_INSTANT_MS,
  MAX_TIMER_MS,
  MIN_INSTANT_MS,
  startTimer,
  toBoundedMs,
  toInstant,
  toMs,
} from "@/lib/durable/duration";
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

describe("toBoundedMs: a duration as the toolkit counts it (docs/rules.md, rule 19)", () => {
  it("counts a duration longer than 1,000 years as 1,000 years, up to Number.MAX_VALUE", () => {
    expect(MAX_DURATION_MS).toBe(1_000 * 365.25 * 86_400_000);
    expect(toBoundedMs("30s")).toBe(30_000);
    for (const far of [Number.MAX_SAFE_INTEGER, 2 ** 60, Number.MAX_VALUE, 8.64e15, "400000d", "1000000000h"]) {
      expect(toBoundedMs(far)).toBe(MAX_DURATION_MS);
    }
    expect(toBoundedMs(MAX_DURATION_MS - 1)).toBe(MAX_DURATION_MS - 1);
  });

  it.each([NaN, Infinity, -Infinity, -1, "Infinityms", "5 m", null])("refuses %s as toMs does", (bad) => {
    expect(() => toBoundedMs(bad as never, "timeout")).toThrow(/invalid timeout/);
  });
});

describe("toInstant: a date as the toolkit stores it (docs/rules.md, rule 19)", () => {
  it("keeps a date in range, as a copy", () => {
    const at = new Date("2026-12-03T10:00:00.000Z");
    const kept = toInstant(at, "until");
    expect(kept).toEqual(at);
    expect(kept).not.toBe(at);
    expect(toInstant("2026-12-03T10:00:00Z", "until").toISOString()).toBe("2026-12-03T10:00:00.000Z");
  });

  it("moves a later date to 9999-01-01 and an earlier one to 1970, however far", () => {
    for (const far of [new Date(8.64e15), "+275760-09-13T00:00:00.000Z", 8.64e15, new Date(Date.UTC(9999, 0, 2))]) {
      expect(toInstant(far, "until").toISOString()).toBe("9999-01-01T00:00:00.000Z");
    }
    for (const past of [new Date(-8.64e15), "-004713-01-01T00:00:00Z", -1, new Date(Date.UTC(1969, 0, 1))]) {
      expect(toInstant(past, "until").toISOString()).toBe("1970-01-01T00:00:00.000Z");
    }
    expect(MAX_INSTANT_MS).toBe(Date.UTC(9999, 0, 1));
    expect(MIN_INSTANT_MS).toBe(0);
  });

  it.each([new Date(NaN), "soon", "", NaN, {}, null])("refuses %s with InvalidInputError naming it", (bad) => {
    expect(() => toInstant(bad as never, "until")).toThrow(InvalidInputError);
    expect(() => toInstant(bad as never, "until")).toThrow(/until is not a date/);
  });
});

describe("startTimer: a timer for any duration (docs/rules.md, rule 19)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires after a delay past Node's 2^31 - 1 ms limit, not at once", () => {
    const fired = vi.fn();
    startTimer(fired, MAX_TIMER_MS * 2 + 10);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(10);
    expect(fired).toHaveBeenCalledOnce();
  });

  it("fires a short one on time, and never once cleared", () => {
    const fired = vi.fn();
    startTimer(fired, 100);
    vi.advanceTimersByTime(99);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledOnce();
    const cleared = vi.fn();
    const timer = startTimer(cleared, MAX_TIMER_MS + 1);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    timer.clear();
    vi.advanceTimersByTime(10);
    expect(cleared).not.toHaveBeenCalled();
  });
});

describe("the rule, not the example", () => {
  it("every duration the toolkit reads goes through toBoundedMs, never toMs alone", () => {
    const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "lib/durable"], {
      encoding: "utf8",
    })
      .split("\n")
      .filter((file) => file.endsWith(".ts") && file !== "lib/durable/duration.ts");
    const callers = files.filter((file) => /\btoMs\(/.test(readFileSync(file, "utf8")));
    expect(callers).toEqual([]);
  });
});
