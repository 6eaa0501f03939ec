import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";

/**
 * The model the support chat talks to, chosen when a turn runs, as the research demo chooses its
 * own (./research-model.ts):
 * - `AI_GATEWAY_API_KEY` set: a real model through the Vercel AI Gateway (`CHAT_MODEL`, default
 *   "openai/gpt-5-mini");
 * - `OPENAI_API_KEY` set: that model at OpenAI (or `OPENAI_BASE_URL`);
 * - neither: the app's own mock model (app/mock-providers/model.ts) at /api/mock-model (or at
 *   `MOCK_MODEL_URL`), which calls the tools a message names. It answers slowly by default
 *   (`CHAT_MOCK_MODEL`, default "mock-slow": 50 ms a chunk; `CHAT_MOCK_DELAY_MS` sets the pause),
 *   so an answer can be watched, reloaded and stopped while it is written.
 */
export function chatModel(): LanguageModel {
  if (process.env.AI_GATEWAY_API_KEY) return process.env.CHAT_MODEL ?? "openai/gpt-5-mini";
  if (process.env.OPENAI_API_KEY) {
    return createOpenAICompatible({
      name: "openai",
      baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
      apiKey: process.env.OPENAI_API_KEY,
      includeUsage: true,
    })(process.env.CHAT_MODEL ?? "gpt-5-mini");
  }
  const delay = process.env.CHAT_MOCK_DELAY_MS;
  return createOpenAICompatible({
    name: "mock",
    baseURL: process.env.MOCK_MODEL_URL ?? `${serverOrigin()}/api/mock-model/v1`,
    includeUsage: true,
    ...(delay ? { headers: { "x-mock-delay-ms": delay } } : {}),
  })(process.env.CHAT_MOCK_MODEL ?? "mock-slow");
}

/** Where this server answers: the address Next records when it starts listening, else localhost:PORT. */
function serverOrigin(): string {
  return process.env.__NEXT_PRIVATE_ORIGIN || `http://localhost:${process.env.PORT || 3000}`;
}

/** What the chat page says it talks to. */
export function chatModelLabel(): string {
  if (process.env.AI_GATEWAY_API_KEY) return `${process.env.CHAT_MODEL ?? "openai/gpt-5-mini"} (AI Gateway)`;
  if (process.env.OPENAI_API_KEY) return `${process.env.CHAT_MODEL ?? "gpt-5-mini"} (OpenAI)`;
  return `${process.env.CHAT_MOCK_MODEL ?? "mock-slow"} (the app's mock model)`;
}
