// The types of a workflow's signals and callbacks: their schemas by name, and what a wait on a
// name resolves to and a sender passes. Part of the vocabulary that types.ts re-exports; it imports
// only types from zod (docs/layout.md).
import type { z } from "zod";

/** Zod schemas of the signals a workflow waits for, by signal name. */
export type SignalSchemas = Record<string, z.ZodType>;
/**
 * Zod schemas of a workflow's callback payloads, by the callback's step id (`ctx.step.callback(id)`):
 * a delivery parses with them (docs/guide/composition.md, "Callback URLs").
 */
export type CallbackSchemas = Record<string, z.ZodType>;

/** A workflow that declares no signals (it accepts any name). */
export type NoSignals = Record<never, z.ZodType>;

/** The signal names a workflow may wait for and be sent: the declared ones; any name when it declares none. */
export type SignalName<TSignals extends SignalSchemas> = [keyof TSignals] extends [never]
  ? string
  : string extends keyof TSignals
    ? string
    : Extract<keyof TSignals, string>;

/** What a wait on `K` resolves to: the declared schema's output (unknown when none is declared). */
export type SignalOutput<TSignals extends SignalSchemas, K extends string> = K extends keyof TSignals
  ? z.output<TSignals[K]>
  : unknown;

/** What a sender passes for `K`: the declared schema's input (unknown when none is declared). */
export type SignalPayload<TSignals extends SignalSchemas, K extends string> = K extends keyof TSignals
  ? z.input<TSignals[K]>
  : unknown;
