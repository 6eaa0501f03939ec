import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";

/**
 * The model the research demo talks to, chosen when a step runs:
 * - `AI_GATEWAY_API_KEY` set: a real model through the Vercel AI Gateway (`RESEARCH_MODEL`, default
 *   "openai/gpt-5-mini");
 * - `OPENAI_API_KEY` set: that model at OpenAI (or `OPENAI_BASE_URL`), which speaks the same API;
 * - neither: the app's own mock model (app/mock-providers/model.ts) at /api/mock-model (or at
 *   `MOCK_MODEL_URL`, a base URL ending in /v1), through the
 *   same OpenAI-compatible provider, so the HTTP path is the real one. It answers slowly by default
 *   (`MOCK_MODEL`, default "mock-slow"), so the answer can be watched as it is written.
 */
export function researchModel(): LanguageModel {
  if (process.env.AI_GATEWAY_API_KEY) return process.env.RESEARCH_MODEL ?? "openai/gpt-5-mini";
  if (process.env.OPENAI_API_KEY) {
    return createOpenAICompatible({
      name: "openai",
      baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
      apiKey: process.env.OPENAI_API_KEY,
      includeUsage: true,
      supportsStructuredOutputs: true,
    })(process.env.RESEARCH_MODEL ?? "gpt-5-mini");
  }
  return createOpenAICompatible({
    name: "mock",
    baseURL: process.env.MOCK_MODEL_URL ?? `${serverOrigin()}/api/mock-model/v1`,
    includeUsage: true,
    supportsStructuredOutputs: true,
  })(process.env.MOCK_MODEL ?? "mock-slow");
}

/** Where this server answers: the address Next records when it starts listening, else localhost:PORT. */
function serverOrigin(): string {
  return process.env.__NEXT_PRIVATE_ORIGIN || `http://localhost:${process.env.PORT || 3000}`;
}
