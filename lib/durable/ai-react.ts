"use client";
// Client entry of the ai wing (the package's `durable-next/ai/react`): the transport that gives the
// AI SDK's `useChat` a chat whose turns are durable runs, and how a turn that did not complete
// ended. Bundled for the browser: nothing here imports the engine, zod, Kysely or node:crypto.
export { DurableChatTransport, type DurableChatTransportOptions } from "./ai/react/durable-chat-transport";
export { TURN_END_PART, type TurnEnd, type TurnEndPart, turnEndOf, withTurnEnd } from "./ai/turn-end";
