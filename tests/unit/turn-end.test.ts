// The part that says how a chat turn that did not complete ended (lib/durable/ai/turn-end.ts,
// docs/guide/chat.md, "A stopped or failed turn"): read only in its own shape, and one per message.
import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { TURN_END_PART, turnEndOf, withTurnEnd } from "@/lib/durable/ai-react";

const answer = (...parts: unknown[]): UIMessage => ({
  id: "a1",
  role: "assistant",
  parts: parts as UIMessage["parts"],
});

describe("turnEndOf and withTurnEnd", () => {
  it("a message without the part has no end; with it, the end it says", () => {
    expect(turnEndOf(answer({ type: "text", text: "hi" }))).toBeNull();
    const stopped = withTurnEnd(answer({ type: "text", text: "hi" }), { status: "cancelled", reason: "stopped" });
    expect(stopped.parts).toEqual([
      { type: "text", text: "hi" },
      { type: TURN_END_PART, data: { status: "cancelled", reason: "stopped" } },
    ]);
    expect(turnEndOf(stopped)).toEqual({ status: "cancelled", reason: "stopped" });
  });

  it("ignores a part of that type in another shape (a client's message is anyone's input)", () => {
    for (const data of [undefined, null, "stopped", { status: "done", reason: "x" }, { status: "failed" }, []]) {
      expect(turnEndOf(answer({ type: TURN_END_PART, data })), JSON.stringify(data)).toBeNull();
    }
  });

  it("keeps one end, the last given, at the end of the parts; the message given is not changed", () => {
    const first = withTurnEnd(answer({ type: "text", text: "a" }), { status: "cancelled", reason: "stopped" });
    const again = withTurnEnd(first, { status: "failed", reason: "the model is down" });
    expect(again.parts.filter((p) => p.type === TURN_END_PART)).toHaveLength(1);
    expect(again.parts.at(-1)).toEqual({
      type: TURN_END_PART,
      data: { status: "failed", reason: "the model is down" },
    });
    expect(turnEndOf(first)).toEqual({ status: "cancelled", reason: "stopped" });
  });
});
