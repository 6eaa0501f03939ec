import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";

/** What a demo asks for: the real model's name, its mock's, and how the mock is reached. */
export interface DemoModelChoice {
  /** The model's name when a key is set (default "openai/gpt-5-mini" at the gateway, "gpt-5-mini" at OpenAI). */
  model?: string;
  /** The mock model's name ("mock-slow" answers 50 ms a chunk: app/mock-providers/model.ts). */
  mock: string;
  /** Headers to the mock (`x-mock-delay-ms`). */
  mockHeaders?: Record<string, string>;
  /** The provider sends JSON schemas (generateObject). */
  structuredOutputs?: boolean;
}

/**
 * The model a demo talks to, chosen when its step runs:
 * - `AI_GATEWAY_API_KEY` set: a real model through the Vercel AI Gateway;
 * - `OPENAI_API_KEY` set: that model at OpenAI (or `OPENAI_BASE_URL`), which speaks the same API;
 * - neither: the app's own mock model (app/mock-providers/model.ts) at /api/mock-model (or at
 *   `MOCK_MODEL_URL`, a base URL ending in /v1), through the same OpenAI-compatible provider, so
 *   the HTTP path is the real one.
 */
export function demoModel(choice: DemoModelChoice): LanguageModel {
  if (process.env.AI_GATEWAY_API_KEY) return choice.model ?? "openai/gpt-5-mini";
  const structured = choice.structuredOutputs ? { supportsStructuredOutputs: true } : {};
  if (process.env.OPENAI_API_KEY) {
    return createOpenAICompatible({
      name: "openai",
      baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
      apiKey: process.env.OPENAI_API_KEY,
      includeUsage: true,
      ...structured,
    })(choice.model ?? "gpt-5-mini");
  }
  return createOpenAICompatible({
    name: "mock",
    baseURL: process.env.MOCK_MODEL_URL ?? `${serverOrigin()}/api/mock-model/v1`,
    includeUsage: true,
    ...structured,
    ...(choice.mockHeaders ? { headers: choice.mockHeaders } : {}),
  })(choice.mock);
}

/** What a page says the demo talks to. */
export function demoModelLabel(choice: DemoModelChoice): string {
  if (process.env.AI_GATEWAY_API_KEY) return `${choice.model ?? "openai/gpt-5-mini"} (AI Gateway)`;
  if (process.env.OPENAI_API_KEY) return `${choice.model ?? "gpt-5-mini"} (OpenAI)`;
  return `${choice.mock} (the app's mock model)`;
}

/** Where this server answers: the address Next records when it starts listening, else localhost:PORT. */
function serverOrigin(): string {
  return process.env.__NEXT_PRIVATE_ORIGIN || `http://localhost:${process.env.PORT || 3000}`;
}
