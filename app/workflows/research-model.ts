import type { LanguageModel } from "ai";
import { demoModel } from "./demo-model";

/**
 * The model the research demo talks to (./demo-model.ts chooses: the gateway, OpenAI, or the mock):
 * `RESEARCH_MODEL` names the real one; the mock answers slowly by default (`MOCK_MODEL`, default
 * "mock-slow"), so the answer can be watched as it is written.
 */
export function researchModel(): LanguageModel {
  return demoModel({
    model: process.env.RESEARCH_MODEL,
    mock: process.env.MOCK_MODEL ?? "mock-slow",
    structuredOutputs: true,
  });
}
