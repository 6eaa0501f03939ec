// The research demo (app/workflows/research.ts) on the test harness, against the mock model over
// real HTTP (the OpenAI-compatible provider it uses in the app): plan, answers, outline, approval,
// the final answer streamed into the run's stream. Then with mockAi: no model at all.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMockModel } from "@/app/mock-providers/model";
import { research } from "@/app/workflows/research";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";

let durable: TestDurable;
let model: MockModelServer;
beforeAll(async () => {
  // The app's own mock, as the demo meets it: answers in prose, not an echo.
  model = await startMockModelServer(createMockModel());
  process.env.MOCK_MODEL_URL = model.url;
  process.env.MOCK_MODEL = "mock"; // no delay per chunk
  durable = await createTestDurable({ workflows: [research] });
});
afterAll(async () => {
  delete process.env.MOCK_MODEL_URL;
  delete process.env.MOCK_MODEL;
  await durable.close();
  await model.close();
});

describe("research", () => {
  it("plans, answers, waits for the outline's approval, then streams the answer it stores", async () => {
    const waiting = await durable.run(research, { question: "What makes a workflow durable?" }, { id: "r-1" });
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "outline" } });
    const subQuestions = waiting.steps.filter((s) => s.id.startsWith("answer/"));
    expect(subQuestions.length).toBeGreaterThanOrEqual(2);
    expect(waiting.steps.find((s) => s.id === "plan")).toMatchObject({ kind: "ai", status: "completed" });
    expect(waiting.steps.find((s) => s.id === "plan")?.usage?.totalTokens).toBeGreaterThan(0);
    const calls = model.requests()["/v1/chat/completions"];
    expect(calls).toBe(1 + subQuestions.length);

    // The outline is in the stream before anyone approves it.
    const outline = (await durable.readStream("r-1"))!.chunks.filter((c) => c.stepId === "outline");
    expect(outline).toHaveLength(1);
    expect(outline[0]!.data).toMatch(/^1\. /);

    await durable.signal({ runId: "r-1", name: "outline", payload: { approved: true, by: "test" } });
    const done = await durable.drive("r-1");
    expect(done).toMatchObject({ status: "completed", output: { status: "answered", approvedBy: "test" } });
    const answer = (done.output as { answer: string }).answer;
    const written = (await durable.readStream("r-1", { limit: 1000 }))!.chunks.filter((c) => c.stepId === "write");
    expect(written.length).toBeGreaterThan(3);
    expect(written.map((c) => c.data).join("")).toBe(answer);
    // It reads as an answer: paragraphs of sentences, none of them the prompt or the outline.
    expect(answer.split("\n\n").length).toBeGreaterThanOrEqual(2);
    expect(answer).toMatch(/^[A-Z][\s\S]*\.$/);
    expect(answer).not.toMatch(/Echo|Approved outline|What makes a workflow durable/);
    expect(model.requests()["/v1/chat/completions"]).toBe(calls! + 1);
  });

  it("answers rejected without writing, and runs on mockAi with no model at all", async () => {
    durable.mockAi("plan", { object: { subQuestions: ["Who?", "Why?"] } });
    durable.mockAi("answer/0", { text: "Someone." });
    durable.mockAi("answer/1", { text: "Because." });
    const before = model.requests()["/v1/chat/completions"];
    const waiting = await durable.run(research, {}, { id: "r-2" });
    expect(waiting.status).toBe("waiting");
    const outline = (await durable.readStream("r-2"))!.chunks[0]!.data;
    expect(outline).toBe("1. Who?\n   Someone.\n2. Why?\n   Because.");
    await durable.signal({ runId: "r-2", name: "outline", payload: { approved: false } });
    expect(await durable.drive("r-2")).toMatchObject({ status: "completed", output: { status: "rejected" } });
    expect(model.requests()["/v1/chat/completions"]).toBe(before);
    durable.clearMocks();
  });
});
