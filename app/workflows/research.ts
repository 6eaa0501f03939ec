import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { researchModel } from "./research-model";

/**
 * A research assistant: plans sub-questions (`generateObject`), answers them (`map`, one receipt
 * per answer), shows the outline and waits for a person to approve it (a signal), then writes the
 * final answer with `streamText` into the run's stream, which the run page shows as it is written.
 * A crash anywhere costs no model call twice: every call's answer is a receipt.
 */
export const research = defineWorkflow({
  name: "research",
  input: z.object({
    question: z.string().min(3).max(300).default("Why do durable workflows replay their code from the top?"),
  }),
  signals: { outline: z.object({ approved: z.boolean(), by: z.string().max(100).optional() }) },
  async run(ctx, input) {
    const model = researchModel();
    const plan = await ctx.step.ai.generateObject(
      "plan",
      {
        model,
        schema: z.object({ subQuestions: z.array(z.string().min(1)).min(2).max(4) }),
        prompt: `Split this question into two to four sub-questions a researcher would answer first: ${input.question}`,
      },
      { retries: 2, timeout: "25s" },
    );
    const answers = await ctx.step.ai.map(
      "answer",
      plan.object.subQuestions,
      (question, i) => ({ model, prompt: `Answer briefly (sub-question ${i + 1}): ${question}` }),
      { concurrency: 3, retries: 2, timeout: "25s" },
    );
    const outline = await ctx.step.run("outline", () => {
      const text = plan.object.subQuestions
        .map((question, i) => `${i + 1}. ${question}\n   ${answers[i]!.text}`)
        .join("\n");
      ctx.stream("outline").write(text);
      return text;
    });

    const decision = await ctx.step.waitForSignal("outline", { id: "approval", timeout: "7d" });
    if (!decision?.approved) {
      return { question: input.question, status: decision ? "rejected" : "expired", answer: null };
    }

    const final = await ctx.step.ai.streamText(
      "write",
      {
        model,
        system: "You write clear, well-structured answers from an approved outline.",
        prompt: `Question: ${input.question}\nApproved outline:\n${outline}\nWrite the final answer.`,
      },
      // A long answer may take a while: a lease that still fits the 55 s budget of a 60 s function.
      { retries: 2, timeout: "40s", lease: "45s" },
    );
    return { question: input.question, status: "answered", approvedBy: decision.by ?? null, answer: final.text };
  },
});
