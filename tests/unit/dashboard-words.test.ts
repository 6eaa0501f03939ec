// The words of the dashboard: a run's progress (a step has no row while it runs, so a running run
// never reads "5 of 5 steps done"), a completed run's outcome beside its status, and the mock
// model's answers, which read as answers rather than an echo of the prompt. tests/demos/outcomes.test.ts
// takes the outcomes from the demos' real outputs; tests/e2e/dashboard.test.ts and research.test.ts
// read them on the pages.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { outcomeOf } from "@/app/components/outcome";
import { OutcomeBadge } from "@/app/components/outcome-badge";
import { progressOf } from "@/app/components/progress";
import { createMockModel } from "@/app/mock-providers/model";
import type { RunStatus } from "@/lib/durable";

type Step = RunStatus["steps"][number];
const step = (id: string, status: Step["status"]): Step => ({
  id,
  kind: "ai",
  status,
  attempt: 1,
  startedAt: null,
  completedAt: null,
  error: null,
});
const done = (...ids: string[]) => ids.map((id) => step(id, "completed"));

describe("progress", () => {
  it("counts the step in flight while a run runs: the research answer streaming after five receipts", () => {
    const run = { status: "running" as const, steps: done("plan", "answer/0", "answer/1", "outline", "approval") };
    expect(progressOf(run)).toEqual({ label: "5 steps done · next step running", percent: 83 });
  });

  it("says what waits, what failed, and reaches the end only once the run completed", () => {
    expect(progressOf({ status: "waiting", steps: [...done("plan"), step("decision", "waiting")] })).toEqual({
      label: "1 step done · 1 waiting",
      percent: 50,
    });
    expect(
      progressOf({ status: "completed", steps: [...done("a", "b"), step("charge", "failed"), ...done("c")] }),
    ).toEqual({ label: "3 steps done · 1 failed", percent: 100 });
    expect(progressOf({ status: "completed", steps: done("a", "b", "c", "d", "e") })).toEqual({
      label: "5 steps done",
      percent: 100,
    });
    expect(progressOf({ status: "pending", steps: [] })).toEqual({ label: "No steps done yet", percent: 0 });
    expect(progressOf({ status: "running", steps: [] })).toEqual({
      label: "No steps done yet · next step running",
      percent: 0,
    });
  });
});

describe("outcome", () => {
  it("reads a status and a reason, a boolean approval, or nothing", () => {
    expect(outcomeOf({ status: "payment_failed", reason: "card declined" })).toEqual({
      label: "Payment failed",
      tone: "bad",
      detail: "card declined",
    });
    expect(outcomeOf({ status: "executed" })).toEqual({ label: "Executed", tone: "good", detail: null });
    expect(outcomeOf({ status: "timedOut" })).toMatchObject({ label: "Timed out", tone: "bad" });
    expect(outcomeOf({ status: "queued" })).toMatchObject({ label: "Queued", tone: "neutral" });
    expect(outcomeOf({ approved: false, reason: "no decision within 7 days" })).toEqual({
      label: "Not approved",
      tone: "bad",
      detail: "no decision within 7 days",
    });
    expect(outcomeOf({ approved: true, by: "ada" })).toMatchObject({ label: "Approved", tone: "good" });
    for (const output of [null, "done", 3, ["status"], { delivered: 3 }, { status: "" }]) {
      expect(outcomeOf(output)).toBeNull();
    }
  });

  it("renders as a pill with its tone, the reason as its tooltip", () => {
    const html = renderToString(
      createElement(OutcomeBadge, {
        outcome: { label: "Cancelled and refunded", tone: "bad", detail: "never settled" },
      }),
    );
    expect(html).toContain('data-outcome="bad"');
    expect(html).toContain('title="never settled"');
    expect(html).toContain(">Cancelled and refunded</span>");
  });
});

describe("the mock model's answers", () => {
  const chat = async (body: Record<string, unknown>, echo = false) => {
    const response = await createMockModel({ echo }).handle(
      new Request("http://mock/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "mock", ...body }),
      }),
    );
    return (await response.json()) as { choices: { message: { content: string } }[] };
  };
  const ask = async (prompt: string, echo = false) =>
    (await chat({ messages: [{ role: "user", content: prompt }] }, echo)).choices[0]!.message.content;

  it("answers in sentences of its own, the same words for the same prompt", async () => {
    const prompt = "Answer briefly (sub-question 1): What is lost when the process dies halfway through?";
    const answer = await ask(prompt);
    expect(answer).toMatch(/^[A-Z][\s\S]*\.$/);
    expect(answer).not.toContain("Echo");
    expect(answer).not.toContain("What is lost");
    expect(answer).toContain("step");
    expect(await ask(prompt)).toBe(answer);
    // Off its subject, a general answer: still not the prompt.
    const general = await ask("How should a small bakery price its sourdough bread?");
    expect(general).toMatch(/^The short answer: .*bakery.*\.$/);
    expect(general).not.toContain("How should");
  });

  it("plans sub-questions of the question, and writes a final answer from an approved outline", async () => {
    const question = "Why do durable workflows replay their code from the top?";
    const schema = {
      type: "object",
      properties: {
        subQuestions: { type: "array", items: { type: "string", minLength: 1 }, minItems: 2, maxItems: 4 },
      },
      required: ["subQuestions"],
    };
    const plan = await chat({
      messages: [{ role: "user", content: `Split this question into two to four sub-questions: ${question}` }],
      response_format: { type: "json_schema", json_schema: { name: "plan", schema } },
    });
    const { subQuestions } = JSON.parse(plan.choices[0]!.message.content) as { subQuestions: string[] };
    expect(subQuestions).toHaveLength(3);
    for (const q of subQuestions) expect(q).toMatch(/^(What|Why|How)\b.*\?$/);
    expect(new Set(subQuestions).size).toBe(3);

    const outline = subQuestions.map((q, i) => `${i + 1}. ${q}\n   An answer.`).join("\n");
    const final = await ask(`Question: ${question}\nApproved outline:\n${outline}\nWrite the final answer.`);
    expect(final.split("\n\n")).toHaveLength(3);
    expect(final).not.toContain("Approved outline");
    expect(final).not.toContain(question);
  });

  it("echoes when made with { echo: true }, for tests that check each call got its own prompt", async () => {
    expect(await ask("hello durable world", true)).toBe("Echo: hello durable world");
  });
});
