// The id of a ctx.continueAsNew successor (engine/run/continue-as-new.ts): derived from the run's,
// `<first id>~n` along the chain, and always a storable run id.
import { describe, expect, it } from "vitest";
import { successorIdOf } from "@/lib/durable/engine/run/continue-as-new";
import { isStorableName } from "@/lib/durable/names";

describe("successorIdOf", () => {
  it("numbers the chain after its first id", () => {
    expect(successorIdOf("order-sync", false)).toBe("order-sync~1");
    expect(successorIdOf("order-sync~1", true)).toBe("order-sync~2");
    expect(successorIdOf("order-sync~9", true)).toBe("order-sync~10");
    // A first run whose own id ends like a link is not one: its chain starts at ~1.
    expect(successorIdOf("report~7", false)).toBe("report~7~1");
  });

  it("cuts and hashes a long first id, so every id of a long chain stays storable", () => {
    const long = "x".repeat(255);
    const first = successorIdOf(long, false);
    expect(first).toMatch(/^x{200}~[0-9a-f]{16}~1$/);
    expect(successorIdOf(`${"x".repeat(254)}y`, false)).not.toBe(first);
    let id = first;
    for (let n = 0; n < 1000; n++) id = successorIdOf(id, true);
    expect(id).toMatch(/~1001$/);
    expect(isStorableName(id)).toBe(true);
    expect(isStorableName(successorIdOf("y".repeat(230), false))).toBe(true);
    expect(successorIdOf("y".repeat(230), false)).toBe(`${"y".repeat(230)}~1`);
  });
});
