import { describe, expect, it } from "vitest";
import { InvalidInputError, ResultTooLargeError } from "@/lib/durable/errors";
import { DEFAULT_MAX_RESULT_BYTES, roundTrip, toJsonText } from "@/lib/durable/json";

const opts = { limit: DEFAULT_MAX_RESULT_BYTES, stepId: "s1" };

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

describe("toJsonText", () => {
  it("defaults the limit to 1 MiB", () => {
    expect(DEFAULT_MAX_RESULT_BYTES).toBe(1_048_576);
  });

  it("serializes as JSON does", () => {
    expect(toJsonText({ a: 1, b: [true, null, "x"] }, opts)).toBe('{"a":1,"b":[true,null,"x"]}');
    expect(toJsonText("hi", opts)).toBe('"hi"');
    expect(toJsonText(null, opts)).toBe("null");
  });

  it("turns BigInt into its decimal string, anywhere in the value", () => {
    expect(toJsonText(12345678901234567890n, opts)).toBe('"12345678901234567890"');
    expect(toJsonText({ n: -5n, list: [1n] }, opts)).toBe('{"n":"-5","list":["1"]}');
  });

  it("writes a top-level undefined (or function) as null", () => {
    expect(toJsonText(undefined, opts)).toBe("null");
    expect(toJsonText(() => 1, opts)).toBe("null");
  });

  it("throws ResultTooLargeError over the limit, counting UTF-8 bytes", () => {
    // "é" is 2 bytes in UTF-8: '"éé"' is 6 bytes but 4 UTF-16 units.
    expect(toJsonText("éé", { limit: 6 })).toBe('"éé"');
    const e = thrown(() => toJsonText("éé", { limit: 5, stepId: "big" }));
    expect(ResultTooLargeError.is(e)).toBe(true);
    expect(e).toMatchObject({ code: "result_too_large", stepId: "big", bytes: 6, limit: 5 });
  });

  it("enforces the default limit of 1 MiB", () => {
    const atLimit = "x".repeat(DEFAULT_MAX_RESULT_BYTES - 2); // plus the two quotes
    expect(toJsonText(atLimit, opts).length).toBe(DEFAULT_MAX_RESULT_BYTES);
    expect(() => toJsonText(`${atLimit}x`, opts)).toThrow(ResultTooLargeError);
  });

  it("refuses a NUL character, which Postgres jsonb cannot store, naming the step", () => {
    for (const v of ["a\u0000b", { nested: ["\u0000"] }, { "k\u0000": 1 }]) {
      const e = thrown(() => toJsonText(v, { limit: 1000, stepId: "fetch-doc" }));
      expect(InvalidInputError.is(e)).toBe(true);
      expect((e as Error).message).toContain('"fetch-doc"');
      expect((e as Error).message).toContain("U+0000");
    }
  });

  it("accepts the literal text \\u0000 (an escaped backslash, which jsonb stores fine)", () => {
    expect(toJsonText("\\u0000", opts)).toBe('"\\\\u0000"');
    expect(toJsonText("\\\\u0000", opts)).toBe('"\\\\\\\\u0000"');
    // ...but not a backslash followed by a real NUL
    expect(() => toJsonText("\\\u0000", opts)).toThrow(InvalidInputError);
  });

  it("refuses a lone surrogate, which Postgres jsonb also refuses, but keeps paired ones", () => {
    expect(() => toJsonText("x\ud800y", opts)).toThrow(/lone surrogate \(U\+D800\)/);
    expect(() => toJsonText("\udfff", opts)).toThrow(InvalidInputError);
    expect(toJsonText("😀", opts)).toBe('"😀"');
  });

  it("wraps values JSON cannot serialize in an InvalidInputError naming the step", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const e = thrown(() => toJsonText(cyclic, { limit: 1000, stepId: "loop" }));
    expect(InvalidInputError.is(e)).toBe(true);
    expect((e as Error).message).toContain('result of step "loop" cannot be serialized as JSON');
    expect((e as Error).cause).toBeInstanceOf(TypeError);
    const throwing = {
      toJSON: () => {
        throw new Error("nope");
      },
    };
    expect(() => toJsonText(throwing, opts)).toThrow(/nope/);
  });
});

describe("roundTrip", () => {
  it("returns what a replay would read back from the receipt", () => {
    const value = {
      at: new Date("2025-01-02T03:04:05.000Z"),
      gone: undefined,
      n: 10n,
      list: [undefined, 1, NaN, Infinity],
      nested: { map: new Map([["a", 1]]) },
    };
    const first = roundTrip(value, opts);
    expect(first).toEqual({
      at: "2025-01-02T03:04:05.000Z",
      n: "10",
      list: [null, 1, null, null],
      nested: { map: {} },
    });
    expect(Object.keys(first as object)).not.toContain("gone");
    // a replay parses the stored text: the same value again
    expect(roundTrip(first, opts)).toEqual(first);
  });

  it("gives null for undefined and does not return the same object", () => {
    expect(roundTrip(undefined, opts)).toBeNull();
    const input = { a: 1 };
    const out = roundTrip(input, opts);
    expect(out).toEqual(input);
    expect(out).not.toBe(input);
  });

  it("throws as toJsonText does", () => {
    expect(() => roundTrip("x".repeat(100), { limit: 10 })).toThrow(ResultTooLargeError);
    expect(() => roundTrip("\u0000", opts)).toThrow(InvalidInputError);
  });
});
