// Tool approvals in the approvals inbox (docs/guide/approvals.md, "Tool approvals"), on every
// database: durable.approvals() lists each agent tool call waiting on signal `tool-approval` beside
// the signal approvals (kind, tool name, call id, its arguments opened), and durable.decide() answers
// one with an actor and a reason: the first decision on a call wins, any later one is a 409, and the
// wait's receipt names who decided. The SQL is durable_decide_approval_item (docs/sql.md).
import { tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createDurable,
  type DecideResult,
  type Durable,
  defineWorkflow,
  InvalidInputError,
  RunStateConflictError,
  TOOL_APPROVAL_SIGNAL,
} from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { refund as signalRefund } from "./approvals-contract";

/** Each refund the tool made, by run: a denied or undecided call adds none. */
const refunded: { runId: string; orderId: string }[] = [];

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

/** Turn 1 asks for two refunds (both need approval); turn 2 says what the tools answered. */
const model = () =>
  new MockLanguageModelV3({
    doGenerate: async (options) => {
      const tools = options.prompt.filter((m) => m.role === "tool");
      if (tools.length > 0) {
        const text = JSON.stringify(tools.flatMap((m) => m.content));
        return {
          content: [{ type: "text", text }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      }
      return {
        content: ["1", "2"].map((orderId) => ({
          type: "tool-call" as const,
          toolCallId: `call_${orderId}`,
          toolName: "refund",
          input: JSON.stringify({ orderId }),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });

export const refundAgent = defineWorkflow({
  name: "refund-agent",
  input: z.object({ prompt: z.string() }),
  async run(ctx, input) {
    const tools = {
      refund: tool({
        description: "Refunds an order",
        inputSchema: z.object({ orderId: z.string() }),
        needsApproval: true,
        execute: async ({ orderId }) => {
          refunded.push({ runId: ctx.runId, orderId });
          return { refunded: orderId };
        },
      }),
    };
    return ctx.step.ai.agent("support", { model: model(), prompt: input.prompt, tools });
  },
});

async function startParked(durable: Durable, id: string, tags?: string[]) {
  await durable.start(refundAgent, { prompt: `refund both, ${id}` }, { id, ...(tags ? { tags } : {}) });
  expect(await durable.advance(id)).toBe("waiting");
}

const conflictOr = <T>(promise: Promise<T>) =>
  promise.catch((e) => {
    if (RunStateConflictError.is(e)) return "conflict" as const;
    throw e;
  });

/**
 * `open` answers the database and a way to open more handles on it (each its own pool on a server),
 * for deciders racing from separate instances.
 */
export function runToolApprovalsInboxContract(
  label: string,
  open: () => Promise<{ db: Kysely<any>; another: () => Promise<Kysely<any>> }>,
) {
  describe(`tool approvals in the inbox on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    let another: () => Promise<Kysely<any>>;
    const options = { workflows: [refundAgent, signalRefund], secrets: { durable: "t" }, log: () => {} };

    beforeAll(async () => {
      ({ db, another } = await open());
      durable = createDurable({ db, ...options });
      await durable.migrate();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      refunded.length = 0;
    });
    afterAll(async () => durable?.close());

    it("lists each waiting tool call, its arguments opened, beside the signal approvals", async () => {
      await startParked(durable, "agent-1", ["team-a"]);
      await durable.start(signalRefund, { amount: 5 }, { id: "signal-1", tags: ["team-b"] });
      expect(await durable.advance("signal-1")).toBe("waiting");
      await durable.testing.advanceClock("3s");

      const { approvals, nextCursor } = await durable.approvals();
      expect(nextCursor).toBeNull();
      const tools = approvals.filter((a) => a.kind === "tool");
      expect(tools).toEqual(
        ["call_1", "call_2"].map((toolCallId, n) => ({
          kind: "tool",
          runId: "agent-1",
          workflow: "refund-agent",
          name: TOOL_APPROVAL_SIGNAL,
          stepId: "support/turn-1/approval-1",
          input: { orderId: String(n + 1) },
          tags: ["team-a"],
          waitingSince: expect.any(Date),
          ageMs: expect.any(Number),
          quorum: 1,
          decisions: [],
          toolCallId,
          toolName: "refund",
          turnId: "support/turn-1",
        })),
      );
      expect(tools[0]!.ageMs).toBeGreaterThanOrEqual(3000);
      expect(approvals.filter((a) => a.kind === "signal")).toMatchObject([{ runId: "signal-1", name: "approve" }]);
      // The filters apply to tool calls as to signals.
      expect((await durable.approvals({ tag: "team-a" })).approvals.map((a) => a.toolCallId)).toEqual([
        "call_1",
        "call_2",
      ]);
      expect((await durable.approvals({ tag: "team-b" })).approvals.map((a) => a.kind)).toEqual(["signal"]);
      expect((await durable.approvals({ workflow: "refund" })).approvals.map((a) => a.kind)).toEqual(["signal"]);
      expect((await durable.approvals({ workflow: "refund-agent" })).approvals).toHaveLength(2);
      // Paging counts waits: the agent's one wait lists both of its calls.
      await startParked(durable, "agent-2");
      const first = await durable.approvals({ limit: 1, workflow: "refund-agent" });
      expect(first.approvals.map((a) => [a.runId, a.toolCallId])).toEqual([
        ["agent-2", "call_1"],
        ["agent-2", "call_2"],
      ]);
      const second = await durable.approvals({ limit: 1, workflow: "refund-agent", cursor: first.nextCursor! });
      expect(second.approvals.map((a) => a.runId)).toEqual(["agent-1", "agent-1"]);
      expect(second.nextCursor).toBeNull();
    });

    it("decides a call with an actor and a reason, first decision wins, and the receipt names the actor", async () => {
      await startParked(durable, "agent-1");
      const approved = await durable.decide({
        runId: "agent-1",
        name: TOOL_APPROVAL_SIGNAL,
        toolCallId: "call_1",
        actor: "ann",
        approved: true,
        reason: "customer is right",
      });
      expect(approved).toEqual({ ok: true, completed: true, approvals: 1, quorum: 1 });
      // Gone from the inbox at once, before the run takes the delivery; a second decision is a 409.
      expect((await durable.approvals()).approvals.map((a) => a.toolCallId)).toEqual(["call_2"]);
      await expect(
        durable.decide({
          runId: "agent-1",
          name: TOOL_APPROVAL_SIGNAL,
          toolCallId: "call_1",
          actor: "bob",
          approved: false,
        }),
      ).rejects.toThrow(/tool call "call_1" of run "agent-1" is already decided/);
      expect(await durable.advance("agent-1")).toBe("waiting");
      expect(refunded).toEqual([]);

      await durable.decide({
        runId: "agent-1",
        name: TOOL_APPROVAL_SIGNAL,
        toolCallId: "call_2",
        actor: "bob",
        approved: false,
        reason: "too much",
      });
      expect((await durable.approvals()).approvals).toEqual([]);
      expect(await durable.advance("agent-1")).toBe("completed");
      expect(refunded).toEqual([{ runId: "agent-1", orderId: "1" }]);
      const status = (await durable.status("agent-1", { ledger: true }))!;
      const receipt = (id: string) => status.steps.find((s) => s.id === id)?.result as any;
      expect(receipt("support/turn-1/approval-1").payload).toEqual({
        toolCallId: "call_1",
        turnId: "support/turn-1",
        approved: true,
        actor: "ann",
        reason: "customer is right",
      });
      expect(receipt("support/turn-1/approval-2").payload).toMatchObject({
        toolCallId: "call_2",
        actor: "bob",
        approved: false,
      });
      expect(receipt("support/turn-1/tool-call_2")).toMatchObject({ denied: true, reason: "too much" });
      // Decided calls, and a finished run, take no more decisions.
      await expect(
        durable.decide({
          runId: "agent-1",
          name: TOOL_APPROVAL_SIGNAL,
          toolCallId: "call_2",
          actor: "cat",
          approved: true,
        }),
      ).rejects.toThrow(RunStateConflictError);
      expect(refunded).toHaveLength(1);
    });

    it("refuses a bad decision and changes nothing", async () => {
      await startParked(durable, "agent-1");
      const decide = (extra: object) =>
        durable.decide({ runId: "agent-1", name: TOOL_APPROVAL_SIGNAL, actor: "ann", approved: true, ...extra });
      await expect(decide({})).rejects.toThrow(InvalidInputError);
      for (const toolCallId of [null, 7, "", "x".repeat(1001), {}]) {
        await expect(decide({ toolCallId })).rejects.toThrow(InvalidInputError);
      }
      await expect(decide({ toolCallId: "call_1", turnId: 3 })).rejects.toThrow(InvalidInputError);
      await expect(decide({ toolCallId: "call_9" })).rejects.toThrow(/no tool call "call_9" waiting/);
      await expect(decide({ toolCallId: "call_1", turnId: "support/turn-2" })).rejects.toThrow(RunStateConflictError);
      await expect(decide({ toolCallId: "call_1", actor: "" })).rejects.toThrow(InvalidInputError);
      await expect(decide({ toolCallId: "call_1", reason: 5 })).rejects.toThrow(InvalidInputError);
      await durable.start(signalRefund, { amount: 5 }, { id: "signal-1" });
      await durable.advance("signal-1");
      await expect(
        durable.decide({ runId: "signal-1", name: "approve", actor: "ann", approved: true, toolCallId: "call_1" }),
      ).rejects.toThrow(/takes no toolCallId/);
      expect((await durable.approvals()).approvals).toHaveLength(3);
      expect(await db.selectFrom("durable_approval_decisions").selectAll().execute()).toEqual([]);
    });

    it("still takes the tool-approval signal the old way", async () => {
      await startParked(durable, "agent-1");
      await durable.signal({
        runId: "agent-1",
        name: TOOL_APPROVAL_SIGNAL,
        payload: { toolCallId: "call_2", approved: true },
      });
      expect(await durable.advance("agent-1")).toBe("waiting");
      expect((await durable.approvals()).approvals.map((a) => a.toolCallId)).toEqual(["call_1"]);
      await expect(
        durable.decide({
          runId: "agent-1",
          name: TOOL_APPROVAL_SIGNAL,
          toolCallId: "call_2",
          actor: "ann",
          approved: true,
        }),
      ).rejects.toThrow(RunStateConflictError);
      await durable.decide({
        runId: "agent-1",
        name: TOOL_APPROVAL_SIGNAL,
        toolCallId: "call_1",
        actor: "ann",
        approved: true,
      });
      expect(await durable.advance("agent-1")).toBe("completed");
      expect(refunded.map((r) => r.orderId).sort()).toEqual(["1", "2"]);
    });

    it("of actors racing from separate instances on one call, exactly one decides it", async () => {
      const actors = ["ann", "bob", "cat", "dan"];
      const deciders: Durable[] = [];
      const handles: Kysely<any>[] = [];
      for (const _ of actors) {
        const handle = await another();
        handles.push(handle);
        deciders.push(createDurable({ db: handle, ...options }));
      }
      try {
        const ids = Array.from({ length: 8 }, (_, n) => `race-${n}`);
        for (const id of ids) await startParked(durable, id);
        for (const id of ids) {
          const answers: (DecideResult | "conflict")[] = await Promise.all(
            actors.map((actor, i) =>
              conflictOr(
                deciders[i]!.decide({
                  runId: id,
                  name: TOOL_APPROVAL_SIGNAL,
                  toolCallId: "call_1",
                  actor,
                  approved: i % 2 === 0,
                  reason: `by ${actor}`,
                }),
              ),
            ),
          );
          const winners = answers.flatMap((a, i) => (a === "conflict" ? [] : [actors[i]!]));
          expect(winners).toHaveLength(1);
          const rows = await db.selectFrom("durable_approval_decisions").selectAll().where("run_id", "=", id).execute();
          expect(rows.map((r) => r.actor)).toEqual(winners);
          const signals = await db.selectFrom("durable_signals").selectAll().where("run_id", "=", id).execute();
          expect(signals).toHaveLength(1);
          await durable.decide({
            runId: id,
            name: TOOL_APPROVAL_SIGNAL,
            toolCallId: "call_2",
            actor: "eve",
            approved: false,
          });
          expect(await durable.advance(id)).toBe("completed");
          const status = (await durable.status(id, { ledger: true }))!;
          const receipt = status.steps.find((s) => s.id === "support/turn-1/approval-1")?.result as any;
          expect(receipt.payload).toMatchObject({ toolCallId: "call_1", actor: winners[0] });
          const winnerApproved = actors.indexOf(winners[0]!) % 2 === 0;
          expect(refunded.filter((r) => r.runId === id).map((r) => r.orderId)).toEqual(winnerApproved ? ["1"] : []);
        }
      } finally {
        for (const decider of deciders) await decider.close();
        for (const handle of handles) if (handle !== db) await handle.destroy();
      }
    });
  });
}
