import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { externalKeyFor } from "@/lib/durable/steps/external-key";

describe("externalKeyFor", () => {
  it("matches a known vector", () => {
    // printf 'run-1\0step-a' | sha256sum
    // → 331ff502a1212b1356a25a289b10c63a720484f1d767070563b30c1c190395cd
    expect(externalKeyFor("run-1", "step-a")).toBe("wfe-331ff502a1212b1356a25a289b10c63a");
  });

  it("hashes the UTF-8 bytes of non-ASCII ids", () => {
    // printf 'doc-42\0ñotify-✓' | sha256sum
    // → d271605a73c849b910dbc15036e9b0b9cc2f175ab66bb6ccd06b2d1c399070a9
    expect(externalKeyFor("doc-42", "ñotify-✓")).toBe("wfe-d271605a73c849b910dbc15036e9b0b9");
  });

  it("is wfe- plus the first 32 hex digits of sha256(runId NUL stepId)", () => {
    for (const [runId, stepId] of [
      ["doc-42", "notify"],
      ["", ""],
      ["a".repeat(500), "步骤"],
    ] as const) {
      const bytes = Buffer.concat([Buffer.from(runId, "utf8"), Buffer.from([0]), Buffer.from(stepId, "utf8")]);
      const expected = `wfe-${createHash("sha256").update(bytes).digest("hex").slice(0, 32)}`;
      expect(externalKeyFor(runId, stepId)).toBe(expected);
    }
  });

  it("is stable and has the documented shape", () => {
    const key = externalKeyFor("run-1", "notify");
    expect(externalKeyFor("run-1", "notify")).toBe(key);
    expect(key).toMatch(/^wfe-[0-9a-f]{32}$/);
  });

  it("separates the ids, so moving a character across the boundary changes the key", () => {
    // printf 'ab\0c' | sha256sum → 6c032e63…; printf 'a\0bc' | sha256sum → 40bb547d…
    expect(externalKeyFor("ab", "c")).toBe("wfe-6c032e631d39a14d85aff7e319546af7");
    expect(externalKeyFor("a", "bc")).toBe("wfe-40bb547d936bbd31318ee37ac8799e7e");
    expect(externalKeyFor("run-1", "a")).not.toBe(externalKeyFor("run-2", "a"));
    expect(externalKeyFor("run-1", "a")).not.toBe(externalKeyFor("run-1", "b"));
  });
});
