// The mock model's tool calls (app/mock-providers/model.ts, ./mock-tools.ts beside it), driven by
// the real AI SDK tool loop through @ai-sdk/openai-compatible over HTTP: the tools named in the
// prompt are called two at a time, with the prompt's digits as ids, and the final text carries
// what each tool answered, a denial included.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, type ModelMessage, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMockModel } from "@/app/mock-providers/model";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";

let server: MockModelServer;
let prose: MockModelServer;
const modelOf = (at: MockModelServer, id = "mock") =>
  createOpenAICompatible({ baseURL: at.url, name: "mock", includeUsage: true }).chatModel(id);

beforeAll(async () => {
  server = await startMockModelServer();
  prose = await startMockModelServer(createMockModel());
});
afterAll(async () => {
  await server?.close();
  await prose?.close();
});
beforeEach(() => {
  server.reset();
  prose.reset();
});

/** Four tools; each answers with what it was given, so the final text shows the arguments went through. */
const tools = {
  lookupOrder: tool({
    description: "Finds an order",
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ order: orderId, status: "shipped" }),
  }),
  refund: tool({
    description: "Refunds an order",
    inputSchema: z.object({ orderId: z.number().int(), reason: z.string() }),
    execute: async ({ orderId }) => `refunded ${orderId}`,
  }),
  notifyCustomer: tool({
    description: "Sends the customer a note",
    inputSchema: z.object({ customerId: z.string(), urgent: z.boolean() }),
    execute: async ({ customerId }) => ({ notified: customerId }),
  }),
  weather: tool({
    description: "The weather somewhere",
    inputSchema: z.object({ city: z.string() }),
    execute: async () => "sunny",
  }),
};
// Named in an order of its own, one name twice and in another case: called in the order first named.
const prompt = "For order 1042: WEATHER first, then lookupOrder, refund and notifyCustomer, then weather again.";
// What the provider sends as each tool message: an object as JSON text, a string as it is.
const outputs = ['{"order":"1042","status":"shipped"}', "refunded 1042", '{"notified":"1042"}', "sunny"];

describe("the mock model's tool calls, through the AI SDK's tool loop", () => {
  it("generateText: four tools named take three steps, 2 + 2 calls then text with every output", async () => {
    const result = await generateText({ model: modelOf(server), tools, prompt, stopWhen: stepCountIs(5) });
    expect(result.steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([
      ["weather", "lookupOrder"],
      ["refund", "notifyCustomer"],
      [],
    ]);
    expect(result.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "tool-calls", "stop"]);
    const calls = result.steps.flatMap((s) => s.toolCalls);
    expect(calls.map((c) => c.toolCallId)).toEqual([
      "call_1_weather",
      "call_2_lookupOrder",
      "call_3_refund",
      "call_4_notifyCustomer",
    ]);
    expect(calls.map((c) => c.input)).toEqual([
      { city: expect.any(String) },
      { orderId: "1042" },
      { orderId: 1042, reason: expect.any(String) },
      { customerId: "1042", urgent: expect.any(Boolean) },
    ]);
    expect(result.text.startsWith(`Echo: ${prompt}`)).toBe(true);
    for (const [name, output] of [
      ["weather", outputs[3]],
      ["lookupOrder", outputs[0]],
      ["refund", outputs[1]],
      ["notifyCustomer", outputs[2]],
    ]) {
      expect(result.text).toContain(` ${name} answered ${output}.`);
    }
    expect(server.requests()["/v1/chat/completions"]).toBe(3);
  });

  it("streamText: the same three steps from streamed tool-call deltas, through slow and reasoning models", async () => {
    const result = streamText({
      model: modelOf(server, "mock-slow-reason"),
      headers: { "x-mock-delay-ms": "2" },
      tools,
      prompt,
      stopWhen: stepCountIs(5),
    });
    const deltas: string[] = [];
    for await (const part of result.fullStream) if (part.type === "tool-input-delta") deltas.push(part.delta);
    const steps = await result.steps;
    expect(steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([
      ["weather", "lookupOrder"],
      ["refund", "notifyCustomer"],
      [],
    ]);
    // Arguments came in pieces and joined back into the inputs.
    expect(deltas.length).toBeGreaterThan(4);
    expect(steps[1]!.toolCalls.map((c) => c.input)).toEqual([
      { orderId: 1042, reason: expect.any(String) },
      { customerId: "1042", urgent: expect.any(Boolean) },
    ]);
    expect(steps[0]!.reasoningText).toBe(`Thinking about: ${prompt}`);
    const text = await result.text;
    for (const output of outputs) expect(text).toContain(output);
    expect((await result.totalUsage).outputTokens).toBeGreaterThan(0);
  });

  it("a prompt naming no tool answers text at once, plain and streamed", async () => {
    const plain = await generateText({
      model: modelOf(server),
      tools,
      prompt: "What is 2 + 2?",
      stopWhen: stepCountIs(5),
    });
    expect(plain.steps).toHaveLength(1);
    expect(plain.text).toBe("Echo: What is 2 + 2?");
    const streamed = streamText({ model: modelOf(server), tools, prompt: "Hello there", stopWhen: stepCountIs(5) });
    expect(await streamed.text).toBe("Echo: Hello there");
    expect(await streamed.steps).toHaveLength(1);
    expect(server.requests()["/v1/chat/completions"]).toBe(2);
  });

  it("in prose, the answer after the tools opens with a sentence per result", async () => {
    const result = await generateText({
      model: modelOf(prose),
      tools,
      prompt: "Please lookupOrder 77 for me.",
      stopWhen: stepCountIs(5),
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolCalls[0]!.input).toEqual({ orderId: "77" });
    expect(result.text).toMatch(/^The lookupOrder tool answered \{"order":"77","status":"shipped"\}\. \S/);
  });

  it("`cut` cuts a streamed tool-call answer halfway, before its finish chunk and `[DONE]`", async () => {
    const response = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "mock-cut",
        stream: true,
        messages: [{ role: "user", content: "weather please" }],
        tools: [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } }],
      }),
    });
    let body = "";
    const reader = response.body!.getReader();
    const readAll = async () => {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        body += new TextDecoder().decode(read.value);
      }
    };
    await expect(readAll()).rejects.toThrow();
    expect(body).toContain('"id":"call_1_weather"');
    expect(body).not.toContain('"finish_reason":"tool_calls"');
    expect(body).not.toContain("[DONE]");
  });

  it("a call denied through the SDK's approval reaches the model as denied", async () => {
    const guarded = {
      refund: tool({
        description: "Refunds an order",
        inputSchema: z.object({ orderId: z.string() }),
        needsApproval: true,
        execute: async () => "refunded",
      }),
    };
    const messages: ModelMessage[] = [{ role: "user", content: "refund order 9" }];
    const first = await generateText({ model: modelOf(server), tools: guarded, messages, stopWhen: stepCountIs(5) });
    const request = first.content.find((part) => part.type === "tool-approval-request");
    expect(request?.toolCall).toMatchObject({ toolCallId: "call_1_refund", input: { orderId: "9" } });
    messages.push(...first.response.messages, {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: request!.approvalId, approved: false }],
    });
    const second = await generateText({ model: modelOf(server), tools: guarded, messages, stopWhen: stepCountIs(5) });
    expect(second.text).toBe("Echo: refund order 9 refund answered Tool call execution denied.");
  });

  it("a hand-made execution-denied result with a reason, streamed: the model is told the reason", async () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "refund order 9" },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_1_refund", toolName: "refund", input: { orderId: "9" } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1_refund",
            toolName: "refund",
            output: { type: "execution-denied", reason: "no" },
          },
        ],
      },
    ];
    const result = streamText({ model: modelOf(server), tools, messages, stopWhen: stepCountIs(5) });
    expect(await result.text).toBe("Echo: refund order 9 refund answered no.");
    // A next user message asks afresh; the call ids count on over the whole conversation.
    const more = await generateText({
      model: modelOf(server),
      tools,
      messages: [...messages, { role: "user", content: "now refund and weather" }],
    });
    expect(more.toolCalls.map((c) => c.toolCallId)).toEqual(["call_2_refund", "call_3_weather"]);
  });
});
