// The types of a workflow's signals and callbacks: their schemas by name, what a wait on a
// name resolves to and a sender passes, and the signals it marks as approvals
// (docs/guide/approvals.md). Part of the vocabulary that types.ts re-exports; it imports
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

/** How a wait marked as an approval is decided. */
export interface ApprovalRule {
  /** Distinct actors who must approve before the wait completes (a whole number, 1 by default). One reject decides. */
  quorum?: number;
  /**
   * Asked before a decision is taken, with the actor and the run's input; `false` refuses the
   * decision with `NotAnApproverError` (HTTP 403) and records nothing.
   */
  approvers?: (actor: string, input: any) => boolean | Promise<boolean>;
}

export interface WorkflowApprovals {
  /**
   * The signal names whose waits a person decides, each `true` or its rule: listed by
   * `durable.approvals()`, decided by `durable.decide()` (never by `signal()`), and resolved to an
   * `ApprovalDecision` (docs/guide/approvals.md).
   */
  approvals?: Record<string, ApprovalRule | true>;
}
