// AI steps (ctx.step.ai) on PGlite, against the mock model over HTTP through the real
// @ai-sdk/openai-compatible provider: each kind stores what a replay needs, and a replay answers
// it without calling the model; timeouts abort the SDK; streamText's stream and receipt agree.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { mockTranscriptionModel } from "@/app/mock-providers/model";
import { createDurable, type Durable, defineWorkflow, FatalStepError, type WorkflowContext } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { completeAiTextResult } from "@/lib/durable/ai/ai-steps";
import { resetDurableTables } from "../helpers/databases";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";

/** How many times the AI SDK was loaded: the module is evaluated on its first import only. */
const aiLoads = vi.hoisted(() => ({ count: 0 }));
vi.mock("ai", async (importOriginal) => {
  aiLoads.count++;
  return await importOriginal();
});

let server: MockModelServer;
let inFlight = 0;
let mostInFlight = 0;
/** The provider the workflows call, over the test's mock server; counts requests in flight. */
const provider = () =>
  createOpenAICompatible({
    baseURL: server.url,
    name: "mock",
    includeUsage: true,
    supportsStructuredOutputs: true,
    fetch: async (input, init) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    },
  });

/** Runs whose last step fails on purpose, so that `retry()` replays everything before it. */
const failAtEnd = new Set<string>();
/** What each execution of a body got from its AI steps, by run id. */
const executions = new Map<string, unknown[]>();
const note = (runId: string, value: unknown) => executions.set(runId, [...(executions.get(runId) ?? []), value]);
const finalStep = (ctx: WorkflowContext<any, any>) =>
  ctx.step.run("final", () => {
    if (failAtEnd.has(ctx.runId)) throw new FatalStepError("the last step fails on purpose");
    return "done";
  });

const profileV1 = z.object({
  name: z.string(),
  age: z.number().int().min(0).max(120),
  tags: z.array(z.enum(["kind", "curious", "brave"])),
  address: z.object({ city: z.string(), verified: z.boolean() }),
});
let profileSchema: z.ZodType = profileV1;

const everyKind = defineWorkflow({
  name: "ai-every-kind",
  input: z.object({}),
  async run(ctx) {
    const model = provider();
    const greeting = await ctx.step.ai.generateText("greet", {
      model: model("mock-reason"),
      system: "You are terse.",
      prompt: "hello durable world",
    });
    const profile = await ctx.step.ai.generateObject("profile", {
      model: model("mock"),
      schema: profileV1,
      prompt: "describe Ada Lovelace",
    });
    const story = await ctx.step.ai.streamText("story", {
      model: model("mock"),
      prompt: "tell me a short story about a fox who kept receipts",
    });
    const translations = await ctx.step.ai.map(
      "translate",
      ["one", "two", "three", "four", "five"],
      (word, i) => ({ model: model("mock"), prompt: `translate ${word} as item ${i}` }),
      { concurrency: 2 },
    );
    const heard = await ctx.step.ai.transcribe("listen", {
      model: mockTranscriptionModel(server.url),
      audio: new TextEncoder().encode("the quick brown fox"),
    });
    const results = { greeting, profile, story, translations, heard };
    note(ctx.runId, results);
    await finalStep(ctx);
    return results;
  },
});

const objectOnly = defineWorkflow({
  name: "ai-object-only",
  input: z.object({}),
  async run(ctx) {
    const profile = await ctx.step.ai.generateObject("profile", {
      model: provider()("mock"),
      schema: profileSchema,
      prompt: "describe Grace Hopper",
    });
    await finalStep(ctx);
    return profile.object;
  },
});

const slowText = defineWorkflow({
  name: "ai-slow-text",
  input: z.object({}),
  async run(ctx) {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
    return ctx.step.ai.generateText(
      "slow",
      { model: provider()("mock-slow"), prompt: words, maxRetries: 0 },
      { timeout: "200ms", retries: 1, retryDelay: 0 },
    );
  },
});

const cutStream = defineWorkflow({
  name: "ai-cut-stream",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.ai.streamText(
      "cut",
      { model: provider()("mock-cut-once"), prompt: "alpha beta gamma delta epsilon zeta eta theta iota kappa" },
      { retries: 2, retryDelay: 0 },
    );
  },
});

const mapWithFailure = defineWorkflow({
  name: "ai-map-failure",
  input: z.object({}),
  async run(ctx) {
    const items = ["a", "b", "c", "d", "e", "f"];
    const results = await ctx.step.ai.map(
      "items",
      items,
      // Item 4's first answer is cut, and the SDK must not retry it within the step's attempt.
      (item, i) => ({ model: provider()(i === 4 ? "mock-cut-once" : "mock"), prompt: `item ${item}`, maxRetries: 0 }),
      { concurrency: 1 },
    );
    return results.map((r) => r.text);
  },
});

const slowMap = defineWorkflow({
  name: "ai-slow-map",
  input: z.object({}),
  async run(ctx) {
    const results = await ctx.step.ai.map(
      "slow-items",
      [5, 1, 4, 2, 3],
      (n) => ({ model: provider()("mock-slow"), prompt: Array.from({ length: n }, () => `n${n}`).join(" ") }),
      { concurrency: 2 },
    );
    return results.map((r) => r.text);
  },
});

const noAi = defineWorkflow({
  name: "no-ai",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("plain", () => "no model here");
  },
});

const oneCall = defineWorkflow({
  name: "ai-one-call",
  input: z.object({}),
  async run(ctx) {
    return (await ctx.step.ai.generateText("one", { model: provider()("mock"), prompt: "just once" })).text;
  },
});

const workflows = [noAi, oneCall, everyKind, objectOnly, slowText, cutStream, mapWithFailure, slowMap];

describe("AI steps on PGlite, against the mock model", () => {
  let durable: Durable;
  let db: Kysely<any>;

  beforeAll(async () => {
    server = await startMockModelServer();
    db = await connect("memory://");
    durable = createDurable({
      db,
      workflows,
      secrets: { durable: "test-secret" },
      defaults: { lease: "5s", inProcessWait: "1s" },
      log: () => {},
    });
    await durable.migrate();
  });
  afterAll(async () => {
    await durable?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await resetDurableTables(db);
    server.reset();
    failAtEnd.clear();
    executions.clear();
    profileSchema = profileV1;
    mostInFlight = 0;
  });

  // First in the file: the AI SDK is loaded once per file, at the first AI step that runs a body.
  it("loads the AI SDK only when an AI step's body runs", async () => {
    const plain = await durable.start(noAi, {}, { id: "no-ai" });
    expect(await durable.advance(plain.id)).toBe("completed");
    expect(aiLoads.count).toBe(0);
    const ai = await durable.start(oneCall, {}, { id: "one-call" });
    expect(await durable.advance(ai.id)).toBe("completed");
    expect((await durable.status(ai.id))!.output).toBe("Echo: just once");
    expect(aiLoads.count).toBe(1);
  });

  it("stores what each kind answered, and a replay answers it without calling the model", async () => {
    const { id } = await durable.start(everyKind, {}, { id: "every-kind" });
    failAtEnd.add(id);
    expect(await durable.advance(id)).toBe("failed");
    // generateText, generateObject, streamText and five map items; one transcription.
    const calls = { "/v1/chat/completions": 8, "/v1/audio/transcriptions": 1 };
    expect(server.requests()).toEqual(calls);
    const first = executions.get(id)![0] as any;

    expect(first.greeting).toEqual({
      text: "Echo: hello durable world",
      finishReason: "stop",
      usage: { inputTokens: 6, outputTokens: 9, totalTokens: 15, reasoningTokens: 5, cachedInputTokens: 0 },
      response: { id: expect.stringMatching(/^mock-\d+$/), modelId: "mock-reason" },
      reasoningText: "Thinking about: hello durable world",
    });
    expect(profileV1.parse(first.profile.object)).toEqual(first.profile.object);
    expect(first.profile).toMatchObject({ finishReason: "stop", response: { modelId: "mock" } });
    expect(first.profile).not.toHaveProperty("text");
    expect(first.story.text).toBe("Echo: tell me a short story about a fox who kept receipts");
    expect(first.story.usage).toMatchObject({ inputTokens: 11, outputTokens: 12, totalTokens: 23 });
    expect(first.translations.map((t: { text: string }) => t.text)).toEqual(
      ["one", "two", "three", "four", "five"].map((w, i) => `Echo: translate ${w} as item ${i}`),
    );
    expect(first.heard).toEqual({
      text: "the quick brown fox",
      segments: [
        { text: "the", startSecond: 0, endSecond: 0.5 },
        { text: "quick", startSecond: 0.5, endSecond: 1 },
        { text: "brown", startSecond: 1, endSecond: 1.5 },
        { text: "fox", startSecond: 1.5, endSecond: 2 },
      ],
      language: "en",
      durationInSeconds: 2,
      response: { modelId: "mock-whisper" },
    });
    // One receipt per call, each of kind "ai"; the map's items are `translate/<i>`.
    const failed = (await durable.status(id))!;
    const aiSteps = failed.steps.filter((s) => s.kind === "ai");
    expect(aiSteps.map((s) => s.id).sort()).toEqual(
      ["greet", "profile", "story", "listen", ...[0, 1, 2, 3, 4].map((i) => `translate/${i}`)].sort(),
    );
    expect(aiSteps.every((s) => s.status === "completed" && s.attempt === 1)).toBe(true);

    // The replay: every AI step answers from its receipt, the same values, no request.
    failAtEnd.delete(id);
    await durable.retry(id);
    expect(await durable.advance(id)).toBe("completed");
    expect(server.requests()).toEqual(calls);
    const replayed = executions.get(id)![1];
    expect(replayed).toEqual(first);
    expect((await durable.status(id))!.output).toEqual(first);

    // streamText's chunks are the run's stream of step "story", and they add up to the stored text.
    const story = (await durable.readStream(id))!.chunks.filter((c) => c.stepId === "story");
    expect(story.length).toBeGreaterThan(5);
    expect(story.every((c) => c.attempt === 1 && !c.broken && typeof c.data === "string")).toBe(true);
    expect(story.map((c) => c.data).join("")).toBe(first.story.text);
  });

  it("checks a stored object against the schema on replay, and names the step when it fails", async () => {
    const { id } = await durable.start(objectOnly, {}, { id: "object-only" });
    failAtEnd.add(id);
    expect(await durable.advance(id)).toBe("failed");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 1 });

    // The workflow's schema changed since: the stored object no longer matches it.
    profileSchema = profileV1.extend({ age: z.number().min(500) });
    failAtEnd.delete(id);
    await durable.retry(id);
    expect(await durable.advance(id)).toBe("failed");
    const status = (await durable.status(id))!;
    expect(status.error?.code).toBe("invalid_input");
    expect(status.error?.message).toContain('AI step "profile": the stored object does not match the schema');
    expect(status.error?.message).toContain("age");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 1 });

    // A schema the stored object matches answers it again.
    profileSchema = profileV1;
    await durable.retry(id);
    expect(await durable.advance(id)).toBe("completed");
    expect(profileV1.safeParse((await durable.status(id))!.output).success).toBe(true);
    expect(server.requests()).toEqual({ "/v1/chat/completions": 1 });
  });

  it("passes the step's abortSignal to the SDK: a timeout ends a slow answer, and is retried", async () => {
    const { id } = await durable.start(slowText, {}, { id: "slow-text" });
    const started = performance.now();
    expect(await durable.advance(id)).toBe("failed");
    // The mock takes 31 × 50 ms per answer; each attempt was cut at 200 ms, far sooner than two answers.
    expect(performance.now() - started).toBeLessThan(2_500);
    const status = (await durable.status(id))!;
    expect(status.error).toMatchObject({ code: "step_timeout" });
    expect(status.steps).toMatchObject([{ id: "slow", kind: "ai", status: "failed", attempt: 2 }]);
    expect(server.requests()).toEqual({ "/v1/chat/completions": 2 });
  });

  it("fails the attempt of a stream cut halfway (its chunks broken) and stores the retry's answer once", async () => {
    const { id } = await durable.start(cutStream, {}, { id: "cut-stream" });
    for (let i = 0; i < 3 && (await durable.status(id))?.status !== "completed"; i++) await durable.advance(id);
    const status = (await durable.status(id))!;
    expect(status.status).toBe("completed");
    expect(status.steps).toMatchObject([{ id: "cut", kind: "ai", status: "completed", attempt: 2 }]);
    const stored = status.output as { text: string };
    expect(stored.text).toBe("Echo: alpha beta gamma delta epsilon zeta eta theta iota kappa");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 2 });

    const chunks = (await durable.readStream(id))!.chunks;
    const killed = chunks.filter((c) => c.attempt === 1);
    const kept = chunks.filter((c) => c.attempt === 2);
    expect(killed.length).toBeGreaterThan(0);
    expect(killed.every((c) => c.broken)).toBe(true);
    expect(killed.map((c) => c.data).join("")).not.toBe(stored.text);
    expect(kept.every((c) => !c.broken)).toBe(true);
    expect(
      chunks
        .filter((c) => !c.broken)
        .map((c) => c.data)
        .join(""),
    ).toBe(stored.text);
  });

  it("map: one receipt per item; a retry answers the items before a failed one from their receipts", async () => {
    const { id } = await durable.start(mapWithFailure, {}, { id: "map-failure" });
    expect(await durable.advance(id)).toBe("failed");
    // Items 0–3 answered, item 4 was cut; with one at a time, item 5 never started.
    expect(server.requests()).toEqual({ "/v1/chat/completions": 5 });
    const failed = (await durable.status(id))!;
    expect(failed.steps.map((s) => [s.id, s.status])).toEqual([
      ["items/0", "completed"],
      ["items/1", "completed"],
      ["items/2", "completed"],
      ["items/3", "completed"],
      ["items/4", "failed"],
    ]);

    await durable.retry(id);
    expect(await durable.advance(id)).toBe("completed");
    // Items 0–3 from their receipts; item 4 again and item 5: two requests.
    expect(server.requests()).toEqual({ "/v1/chat/completions": 7 });
    expect((await durable.status(id))!.output).toEqual(["a", "b", "c", "d", "e", "f"].map((x) => `Echo: item ${x}`));
  });

  it("map: at most `concurrency` calls at once, the results in item order", async () => {
    const { id } = await durable.start(slowMap, {}, { id: "slow-map" });
    expect(await durable.advance(id)).toBe("completed");
    expect(mostInFlight).toBe(2);
    expect((await durable.status(id))!.output).toEqual(
      [5, 1, 4, 2, 3].map((n) => `Echo: ${Array.from({ length: n }, () => `n${n}`).join(" ")}`),
    );
    expect(server.requests()).toEqual({ "/v1/chat/completions": 5 });
  });

  it("completeAiTextResult fills what a partial result leaves out", () => {
    expect(completeAiTextResult({ text: "hi" })).toEqual({ text: "hi", finishReason: "stop", usage: {}, response: {} });
    expect(completeAiTextResult({ reasoningText: "hm", usage: { totalTokens: 3 } })).toEqual({
      text: "",
      finishReason: "stop",
      usage: { totalTokens: 3 },
      response: {},
      reasoningText: "hm",
    });
  });
});
