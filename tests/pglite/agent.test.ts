// ctx.step.ai.agent on PGlite, against the mock model over HTTP through the real
// @ai-sdk/openai-compatible provider: each turn and each tool call is a step, a replay calls neither
// the model nor a tool, approvals park the run on signal `tool-approval`, a denial reaches the model,
// and `stream: true` writes the turns' UI message chunks to the run's stream.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createDurable,
  type Durable,
  defineWorkflow,
  externalKeyFor,
  FatalStepError,
  RunStateConflictError,
  TOOL_APPROVAL_SIGNAL,
  toolStep,
  txTool,
} from "@/lib/durable";
import { toolApprovals } from "@/lib/durable/ai";
import { connect } from "@/lib/durable/drivers/connect";
import { resetDurableTables } from "../helpers/databases";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";

let server: MockModelServer;
const model = () => createOpenAICompatible({ baseURL: server.url, name: "mock", includeUsage: true })("mock");

/** Each tool execution, by tool name: a replay must add none. */
const executed: { tool: string; input: unknown; externalKey: string }[] = [];
const failAtEnd = new Set<string>();

const tools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async (input, options) => {
      executed.push({ tool: "weather", input, externalKey: toolStep(options).externalKey });
      return "sunny";
    },
  }),
  lookupOrder: tool({
    description: "An order by id",
    inputSchema: z.object({ orderId: z.string() }),
    execute: async (input, options) => {
      executed.push({ tool: "lookupOrder", input, externalKey: toolStep(options).externalKey });
      return { order: input.orderId, status: "shipped" };
    },
  }),
  stock: tool({
    description: "Units in stock of a product",
    inputSchema: z.object({ productId: z.number() }),
    execute: async (input, options) => {
      executed.push({ tool: "stock", input, externalKey: toolStep(options).externalKey });
      return { units: 7 };
    },
  }),
  badNote: txTool({
    description: "Writes a note, then fails",
    inputSchema: z.object({ orderId: z.string() }),
    execute: async (input, { tx }): Promise<string> => {
      await sql`insert into agent_notes (order_id, external_key) values (${input.orderId}, 'bad')`.execute(tx);
      throw new Error("the note could not be kept");
    },
  }),
  broken: tool({
    description: "Always fails",
    inputSchema: z.object({ orderId: z.string() }),
    execute: async (): Promise<string> => {
      executed.push({ tool: "broken", input: null, externalKey: "" });
      throw new Error("the broken tool failed");
    },
  }),
  refund: tool({
    description: "Refunds an order",
    inputSchema: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async (input, options) => {
      executed.push({ tool: "refund", input, externalKey: toolStep(options).externalKey });
      return { refunded: input.orderId };
    },
  }),
  note: txTool({
    description: "Writes a note about an order",
    inputSchema: z.object({ orderId: z.string() }),
    execute: async (input, { tx, experimental_context }) => {
      const key = experimental_context.externalKey;
      await sql`insert into agent_notes (order_id, external_key) values (${input.orderId}, ${key})`.execute(tx);
      return { noted: input.orderId };
    },
  }),
};

const agentRun = defineWorkflow({
  name: "agent-run",
  input: z.object({ prompt: z.string(), stream: z.boolean().default(false), maxSteps: z.number().optional() }),
  async run(ctx, input) {
    const result = await ctx.step.ai.agent("support", {
      model: model(),
      system: "You help with orders.",
      prompt: input.prompt,
      tools,
      stream: input.stream,
      maxSteps: input.maxSteps,
      toolOptions: { retries: 1, retryDelay: 0 },
    });
    await ctx.step.run("final", () => {
      if (failAtEnd.has(ctx.runId)) throw new FatalStepError("the last step fails on purpose");
      return "done";
    });
    return result;
  },
});

/**
 * A model that uses call ids again in later turns (the AI SDK's own loop takes that): turn n (the
 * assistant messages in its prompt, plus one) answers `script[n - 1]`'s calls, or text after them.
 */
const reusingModel = (script: { id: string; tool: string; input: object }[][]) =>
  new MockLanguageModelV3({
    doGenerate: async (options) => {
      const turn = options.prompt.filter((m) => m.role === "assistant").length + 1;
      const calls = script[turn - 1] ?? [];
      const usage = {
        inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 2, text: 2, reasoning: undefined },
      };
      if (calls.length === 0) {
        return {
          content: [{ type: "text", text: `done after ${turn - 1} turns` }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      }
      return {
        content: calls.map((c) => ({
          type: "tool-call" as const,
          toolCallId: c.id,
          toolName: c.tool,
          input: JSON.stringify(c.input),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });

const reuseScripts: Record<string, { id: string; tool: string; input: object }[][]> = {
  // The same id for a call in turn 1 and another in turn 2.
  weather: [
    [{ id: "call_A", tool: "weather", input: { city: "Oslo" } }],
    [{ id: "call_A", tool: "weather", input: { city: "Rome" } }],
  ],
  // A call that needs approval, its id used again for another call that needs approval.
  refund: [
    [{ id: "call_R", tool: "refund", input: { orderId: "1" } }],
    [{ id: "call_R", tool: "refund", input: { orderId: "2" } }],
  ],
  // Turn 1: a call that runs at once and one that waits for approval; turn 2 uses the first id again.
  mixed: [
    [
      { id: "call_A", tool: "weather", input: { city: "Oslo" } },
      { id: "call_R", tool: "refund", input: { orderId: "3" } },
    ],
    [{ id: "call_A", tool: "weather", input: { city: "Rome" } }],
  ],
};

const reusedIds = defineWorkflow({
  name: "agent-reused-ids",
  input: z.object({ script: z.string() }),
  async run(ctx, input) {
    return ctx.step.ai.agent("support", {
      model: reusingModel(reuseScripts[input.script]!),
      prompt: `script ${input.script}`,
      tools: { weather: tools.weather, refund: tools.refund },
    });
  },
});

describe("ctx.step.ai.agent", () => {
  let durable: Durable;
  let db: Kysely<any>;

  beforeAll(async () => {
    server = await startMockModelServer();
    db = await connect("memory://");
    durable = createDurable({
      db,
      workflows: [agentRun, reusedIds],
      secrets: { durable: "test-secret" },
      defaults: { lease: "5s", inProcessWait: "1s" },
      log: () => {},
    });
    await durable.migrate();
    await sql`create table agent_notes (order_id text, external_key text)`.execute(db);
  });
  afterAll(async () => {
    await durable?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await resetDurableTables(db);
    await sql`delete from agent_notes`.execute(db);
    server.reset();
    executed.length = 0;
    failAtEnd.clear();
  });

  it("runs 3 turns and 4 tool calls as steps, and a replay requests nothing and runs no tool", async () => {
    const prompt = "order 1042: use weather, lookupOrder, stock and note";
    const { id } = await durable.start(agentRun, { prompt }, { id: "four-tools" });
    failAtEnd.add(id);
    expect(await durable.advance(id)).toBe("failed");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 3 });
    expect(executed.map((e) => e.tool)).toEqual(["weather", "lookupOrder", "stock"]);
    const notes = await sql<{ external_key: string }>`select external_key from agent_notes`.execute(db);
    expect(notes.rows).toHaveLength(1);

    const status = (await durable.status(id))!;
    const ids = status.steps.map((s) => s.id);
    expect(ids.filter((s) => /^support\/turn-\d+$/.test(s))).toEqual([
      "support/turn-1",
      "support/turn-2",
      "support/turn-3",
    ]);
    const toolSteps = status.steps.filter((s) => s.id.includes("/tool-"));
    expect(toolSteps.map((s) => [s.id, s.kind])).toEqual([
      ["support/turn-1/tool-call_1_weather", "run"],
      ["support/turn-1/tool-call_2_lookupOrder", "run"],
      ["support/turn-2/tool-call_3_stock", "run"],
      ["support/turn-2/tool-call_4_note", "tx"],
    ]);
    // Each tool got its step's external key, the txTool too.
    expect(executed.map((e) => e.externalKey)).toEqual(toolSteps.slice(0, 3).map((s) => s.externalKey));
    expect(notes.rows[0]!.external_key).toBe(toolSteps[3]!.externalKey);
    expect(executed[1]!.input).toEqual({ orderId: "1042" });

    // The retry replays the agent from its receipts: no model request, no tool run, no second note.
    failAtEnd.delete(id);
    await durable.retry(id);
    expect(await durable.advance(id)).toBe("completed");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 3 });
    expect(executed).toHaveLength(3);
    expect((await sql<{ n: number }>`select count(*)::int as n from agent_notes`.execute(db)).rows[0]!.n).toBe(1);

    const output = (await durable.status(id))!.output as any;
    expect(output.steps.map((s: any) => s.toolCalls.length)).toEqual([2, 2, 0]);
    expect(output.finishReason).toBe("stop");
    expect(output.text).toContain("lookupOrder answered");
    expect(output.text).toContain('{"order":"1042","status":"shipped"}');
    expect(output.text).toContain('note answered {"noted":"1042"}');
    // Usage summed over the turns, each turn's shown.
    const turnUsage = output.steps.map((s: any) => s.usage.totalTokens);
    expect(turnUsage.every((n: unknown) => typeof n === "number" && n > 0)).toBe(true);
    expect(output.usage.totalTokens).toBe(turnUsage.reduce((a: number, b: number) => a + b, 0));
    // The messages it added: assistant, tool, assistant, tool, assistant.
    expect(output.messages.map((m: any) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "assistant"]);
  });

  it("parks a call that needs approval with nothing running, and runs it once approved", async () => {
    const { id } = await durable.start(agentRun, { prompt: "please refund order 77" });
    expect(await durable.advance(id)).toBe("waiting");
    const parked = (await durable.status(id))!;
    expect(parked.status).toBe("waiting");
    expect(executed).toEqual([]);
    expect(parked.steps.find((s) => s.id === "support/turn-1")).toMatchObject({ kind: "ai", status: "completed" });
    expect(parked.steps.at(-1)).toMatchObject({ id: "support/turn-1/approval-1", kind: "signal", status: "waiting" });
    const pending = [
      {
        agentId: "support",
        turnId: "support/turn-1",
        toolCallId: "call_1_refund",
        toolName: "refund",
        input: { orderId: "77" },
      },
    ];
    expect(await durable.toolApprovals(id)).toEqual(pending);
    expect(await toolApprovals(durable, id)).toEqual(pending); // the wing's function, which the method calls

    // A delivery for another call is passed over; the one for this call runs the tool.
    await durable.signal({ runId: id, name: TOOL_APPROVAL_SIGNAL, payload: { toolCallId: "nope", approved: true } });
    expect(await durable.advance(id)).toBe("waiting");
    expect(executed).toEqual([]);
    expect(await durable.toolApprovals(id)).toEqual(pending);
    await durable.signal({
      runId: id,
      name: TOOL_APPROVAL_SIGNAL,
      payload: { toolCallId: "call_1_refund", approved: true },
    });
    expect(await durable.advance(id)).toBe("completed");
    expect(executed.map((e) => e.tool)).toEqual(["refund"]);
    expect(server.requests()).toEqual({ "/v1/chat/completions": 2 });
    expect(await durable.toolApprovals(id)).toEqual([]);
    expect(await toolApprovals(durable, id)).toEqual([]);
    const output = (await durable.status(id))!.output as any;
    expect(output.text).toContain('refund answered {"refunded":"77"}');
  });

  it("answers a denied call to the model as denied, and runs nothing", async () => {
    const { id } = await durable.start(agentRun, { prompt: "refund order 78" });
    expect(await durable.advance(id)).toBe("waiting");
    await durable.signal({
      runId: id,
      name: TOOL_APPROVAL_SIGNAL,
      payload: { toolCallId: "call_1_refund", approved: false, reason: "not eligible" },
    });
    expect(await durable.advance(id)).toBe("completed");
    expect(executed).toEqual([]);
    const status = (await durable.status(id))!;
    const output = status.output as any;
    expect(output.steps[0].toolResults).toEqual([
      { toolCallId: "call_1_refund", toolName: "refund", denied: true, reason: "not eligible" },
    ]);
    // The mock repeats what the tool message said: the model was told it was denied, and why.
    expect(output.text).toContain("refund answered not eligible");
  });

  it("refuses an approval payload the agent could not read, and changes nothing", async () => {
    const { id } = await durable.start(agentRun, { prompt: "refund order 79" });
    expect(await durable.advance(id)).toBe("waiting");
    await expect(
      durable.signal({ runId: id, name: TOOL_APPROVAL_SIGNAL, payload: { toolCallId: "call_1_refund" } }),
    ).rejects.toThrow(/payload of signal "tool-approval" is invalid/);
    expect((await durable.status(id))!.status).toBe("waiting");
    expect(await durable.toolApprovals(id)).toHaveLength(1);
  });

  it("writes each turn's UI message chunks to the run's stream, tool outputs from the tool steps", async () => {
    const { id } = await durable.start(agentRun, { prompt: "order 5: weather, lookupOrder and note", stream: true });
    expect(await durable.advance(id)).toBe("completed");
    const chunks = (await durable.readStream(id, { limit: 1000 }))!.chunks;
    expect(chunks.every((c) => !c.broken)).toBe(true);
    const types = chunks.map((c) => (c.data as any).type);
    expect(types).not.toContain("start");
    expect(types).not.toContain("finish");
    expect(types.filter((t) => t === "start-step")).toHaveLength(3);
    expect(types.filter((t) => t === "finish-step")).toHaveLength(3);
    expect(chunks.filter((c) => (c.data as any).type === "tool-input-available").map((c) => c.stepId)).toEqual([
      "support/turn-1",
      "support/turn-1",
      "support/turn-2",
    ]);
    // A run tool's output comes from its step; a txTool's (a tx step has no stream) from the next turn.
    const outputs = chunks.filter((c) => (c.data as any).type === "tool-output-available");
    expect(outputs.map((c) => [c.stepId, (c.data as any).toolCallId, (c.data as any).output])).toEqual([
      ["support/turn-1/tool-call_1_weather", "call_1_weather", "sunny"],
      ["support/turn-1/tool-call_2_lookupOrder", "call_2_lookupOrder", { order: "5", status: "shipped" }],
      ["support/turn-3", "call_3_note", { noted: "5" }],
    ]);
    const text = chunks
      .filter((c) => (c.data as any).type === "text-delta")
      .map((c) => (c.data as any).delta)
      .join("");
    expect(text).toBe(((await durable.status(id))!.output as any).text);
    // Text part ids carry their turn.
    expect(chunks.filter((c) => (c.data as any).type === "text-start").map((c) => (c.data as any).id)).toEqual([
      expect.stringMatching(/^3-/),
    ]);
  });

  it("stops at maxSteps with the last turn's calls answered", async () => {
    const { id } = await durable.start(agentRun, { prompt: "order 3: weather, stock and lookupOrder", maxSteps: 1 });
    expect(await durable.advance(id)).toBe("completed");
    const output = (await durable.status(id))!.output as any;
    expect(output.steps).toHaveLength(1);
    expect(output.finishReason).toBe("tool-calls");
    expect(output.steps[0].toolResults.map((r: any) => r.toolName)).toEqual(["weather", "stock"]);
    expect(server.requests()).toEqual({ "/v1/chat/completions": 1 });
  });

  it("retries a failing tool within its retries, then tells the model the error", async () => {
    const { id } = await durable.start(agentRun, { prompt: "order 4: broken" });
    expect(await durable.advance(id)).toBe("completed");
    expect(executed.map((e) => e.tool)).toEqual(["broken", "broken"]);
    const output = (await durable.status(id))!.output as any;
    expect(output.steps[0].toolResults).toEqual([
      { toolCallId: "call_1_broken", toolName: "broken", error: "the broken tool failed" },
    ]);
    expect(output.text).toContain("broken answered the broken tool failed");
  });

  it("rolls back a txTool that fails after its retries, and tells the model the error", async () => {
    const { id } = await durable.start(agentRun, { prompt: "order 6: badNote" });
    expect(await durable.advance(id)).toBe("completed");
    expect((await sql`select * from agent_notes`.execute(db)).rows).toEqual([]);
    const output = (await durable.status(id))!.output as any;
    expect(output.steps[0].toolResults).toEqual([
      { toolCallId: "call_1_badNote", toolName: "badNote", error: "the note could not be kept" },
    ]);
    expect(output.text).toContain("badNote answered the note could not be kept");
    const step = (await durable.status(id))!.steps.find((s) => s.id === "support/turn-1/tool-call_1_badNote")!;
    expect(step).toMatchObject({ kind: "tx", status: "failed", attempt: 2 });
  });
  it("a model that reuses a tool call id in a later turn gets a step per turn, as the SDK's loop does", async () => {
    const { id } = await durable.start(reusedIds, { script: "weather" });
    expect(await durable.advance(id)).toBe("completed");
    const status = (await durable.status(id))!;
    expect(status.error).toBeNull();
    expect(executed.map((e) => e.input)).toEqual([{ city: "Oslo" }, { city: "Rome" }]);
    const toolSteps = status.steps.filter((s) => s.id.includes("/tool-"));
    expect(toolSteps.map((s) => [s.id, s.status])).toEqual([
      ["support/turn-1/tool-call_A", "completed"],
      ["support/turn-2/tool-call_A", "completed"],
    ]);
    // Each call its own external key.
    expect(executed.map((e) => e.externalKey)).toEqual(toolSteps.map((s) => s.externalKey));
    expect(new Set(executed.map((e) => e.externalKey)).size).toBe(2);
    const output = status.output as any;
    expect(output.text).toBe("done after 2 turns");
    expect(output.steps.map((s: any) => s.toolResults.map((r: any) => [r.toolCallId, r.output]))).toEqual([
      [["call_A", "sunny"]],
      [["call_A", "sunny"]],
      [],
    ]);
    // A replay answers both from their receipts.
    await durable.retry(id).catch(() => {});
    expect(executed).toHaveLength(2);
  });

  it("approvals of a call id used again in a later turn are asked and matched per turn", async () => {
    const { id } = await durable.start(reusedIds, { script: "refund" });
    expect(await durable.advance(id)).toBe("waiting");
    expect(await durable.toolApprovals(id)).toMatchObject([
      { turnId: "support/turn-1", toolCallId: "call_R", input: { orderId: "1" } },
    ]);
    await durable.signal({
      runId: id,
      name: TOOL_APPROVAL_SIGNAL,
      payload: { toolCallId: "call_R", approved: true, turnId: "support/turn-1" },
      id: "approve-turn-1",
    });
    expect(await durable.advance(id)).toBe("waiting");
    expect(executed.map((e) => e.input)).toEqual([{ orderId: "1" }]);
    // Turn 2 asks again for the same id: it is pending again, for its own turn.
    expect(await durable.toolApprovals(id)).toMatchObject([
      { turnId: "support/turn-2", toolCallId: "call_R", input: { orderId: "2" } },
    ]);
    // A second answer meant for turn 1 (a late double click) is not taken as turn 2's.
    await durable.signal({
      runId: id,
      name: TOOL_APPROVAL_SIGNAL,
      payload: { toolCallId: "call_R", approved: true, turnId: "support/turn-1" },
      id: "approve-turn-1-again",
    });
    expect(await durable.advance(id)).toBe("waiting");
    expect(executed).toHaveLength(1);
    expect(await durable.toolApprovals(id)).toHaveLength(1);
    await durable.signal({
      runId: id,
      name: TOOL_APPROVAL_SIGNAL,
      payload: { toolCallId: "call_R", approved: false, reason: "once is enough", turnId: "support/turn-2" },
    });
    expect(await durable.advance(id)).toBe("completed");
    expect(executed).toHaveLength(1);
    expect(await durable.toolApprovals(id)).toEqual([]);
    const output = (await durable.status(id))!.output as any;
    expect(output.steps.map((s: any) => s.toolResults)).toEqual([
      [{ toolCallId: "call_R", toolName: "refund", output: { refunded: "1" } }],
      [{ toolCallId: "call_R", toolName: "refund", denied: true, reason: "once is enough" }],
      [],
    ]);
  });

  it("a run recorded with the old tool step ids (<id>/tool-<call>) replays from them after a deploy", async () => {
    // Parked on turn 1's approval with call_A run: then the step is given the id and key the
    // releases before per-turn ids wrote, as a run asleep across the deploy holds it.
    const { id } = await durable.start(reusedIds, { script: "mixed" });
    expect(await durable.advance(id)).toBe("waiting");
    expect(executed.map((e) => e.input)).toEqual([{ city: "Oslo" }]);
    const oldId = "support/tool-call_A";
    const renamed = await sql`update durable_steps set step_id = ${oldId}, external_key = ${externalKeyFor(id, oldId)}
                               where run_id = ${id} and step_id like 'support/%tool-call_A'`.execute(db);
    expect(Number(renamed.numAffectedRows)).toBe(1);
    // The old receipt answers turn 1's call_A: only call_R waits.
    expect(await durable.toolApprovals(id)).toMatchObject([{ turnId: "support/turn-1", toolCallId: "call_R" }]);

    await durable.signal({ runId: id, name: TOOL_APPROVAL_SIGNAL, payload: { toolCallId: "call_R", approved: true } });
    expect(await durable.advance(id)).toBe("completed");
    // Turn 1's call_A was not run again; turn 2's (the same id) ran as a step of its own.
    expect(executed.map((e) => e.input)).toEqual([{ city: "Oslo" }, { orderId: "3" }, { city: "Rome" }]);
    const status = (await durable.status(id))!;
    expect(status.warnings).toEqual([]);
    expect(status.steps.filter((s) => s.id.includes("/tool-")).map((s) => [s.id, s.status])).toEqual([
      [oldId, "completed"],
      ["support/turn-1/tool-call_R", "completed"],
      ["support/turn-2/tool-call_A", "completed"],
    ]);
    const output = status.output as any;
    expect(output.steps[0].toolResults.map((r: any) => r.output)).toEqual(["sunny", { refunded: "3" }]);
    expect(output.text).toBe("done after 2 turns");
    expect(await durable.toolApprovals(id)).toEqual([]);
  });
});

describe("durable.toolApprovals on a closed instance", () => {
  it("refuses as every method of the facade does, before reading anything", async () => {
    const closed = createDurable({ db: await connect("memory://"), workflows: [] });
    await closed.migrate();
    await closed.close();
    await expect(closed.toolApprovals("any-run")).rejects.toThrow(RunStateConflictError);
    await expect(closed.toolApprovals("any-run")).rejects.toThrow("this durable instance is closed");
  });
});
