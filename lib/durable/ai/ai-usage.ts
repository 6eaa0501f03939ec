import type { LanguageModelUsage } from "ai";
import type { AiUsage } from "../types";

/** The SDK's usage as stored: the fields it reported, across all of the call's steps. */
export function usageOf(usage: LanguageModelUsage | undefined): AiUsage {
  if (!usage) return {};
  return compact({
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
    reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? usage.reasoningTokens,
    cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens,
  });
}

/** Drops the fields that are undefined, as the JSON of the receipt would. */
export function compact<T extends Record<string, unknown>>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as any;
}
