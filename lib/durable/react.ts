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
// The ai wing's client part, from before it had its own entry (durable-next/ai/react).
export {
  /** @deprecated import from "durable-next/ai/react" */
  DurableChatTransport,
  /** @deprecated import from "durable-next/ai/react" */
  type DurableChatTransportOptions,
} from "./ai/react/durable-chat-transport";
export {
  /** @deprecated import from "durable-next/ai/react" */
  TURN_END_PART,
  /** @deprecated import from "durable-next/ai/react" */
  type TurnEnd,
  /** @deprecated import from "durable-next/ai/react" */
  type TurnEndPart,
  /** @deprecated import from "durable-next/ai/react" */
  turnEndOf,
  /** @deprecated import from "durable-next/ai/react" */
  withTurnEnd,
} from "./ai/turn-end";
