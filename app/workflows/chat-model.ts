import type { LanguageModel } from "ai";
import { type DemoModelChoice, demoModel, demoModelLabel } from "./demo-model";

/**
 * The model the support chat talks to (./demo-model.ts chooses: the gateway, OpenAI, or the mock):
 * `CHAT_MODEL` names the real one. The mock calls the tools a message names, and answers slowly by
 * default (`CHAT_MOCK_MODEL`, default "mock-slow": 50 ms a chunk; `CHAT_MOCK_DELAY_MS` sets the
 * pause), so an answer can be watched, reloaded and stopped while it is written.
 */
function chatChoice(): DemoModelChoice {
  const delay = process.env.CHAT_MOCK_DELAY_MS;
  return {
    model: process.env.CHAT_MODEL,
    mock: process.env.CHAT_MOCK_MODEL ?? "mock-slow",
    ...(delay ? { mockHeaders: { "x-mock-delay-ms": delay } } : {}),
  };
}

export const chatModel = (): LanguageModel => demoModel(chatChoice());

/** What the chat page says it talks to. */
export const chatModelLabel = (): string => demoModelLabel(chatChoice());
