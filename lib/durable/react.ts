"use client";
// Entry point for client components: the hooks that watch a run, and the loops they wrap (a file
// each in react/). Only types come from the engine: this entry is bundled for the browser, which
// must not get zod, Kysely or node:crypto (docs/layout.md, "The folders").
export { isTerminal, RunPoller } from "./react/run-poller";
export { type SseEvent, SseParser } from "./react/sse-parser";
export { RunStreamReader } from "./react/run-stream-reader";
export {
  RunPollError,
  type RunPollOptions,
  type RunPollState,
  type RunStreamChunk,
  RunStreamError,
  type RunStreamOptions,
  type RunStreamState,
} from "./react/types";
export { useDurableRun } from "./react/use-durable-run";
export { useDurableStream } from "./react/use-durable-stream";
export { DurableChatTransport, type DurableChatTransportOptions } from "./ai/react/durable-chat-transport";
// How a chat turn that did not complete ended (the part loadChat reads from the run, and Stop adds).
export { TURN_END_PART, type TurnEnd, type TurnEndPart, turnEndOf, withTurnEnd } from "./ai/turn-end";
