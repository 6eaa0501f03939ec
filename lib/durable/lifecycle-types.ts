// The public types of lifecycle hooks and outbound webhooks (docs/guide/lifecycle.md): what
// defineWorkflow({ onComplete, onFailure }) and createDurable({ webhooks }) take. Kept apart from
// types.ts (its line cap); WorkflowDefinition extends LifecycleHooks there.
import type { Duration } from "./duration";

/** A workflow a hook starts: the workflow itself, or its name (registered on the same instance). */
export type LifecycleHookTarget = string | { readonly name: string };

export interface LifecycleHooks {
  /**
   * Started as a run, child of this one, in the transaction that completes a run of this workflow,
   * with `{ id, workflow, status: "completed", output }` as its input (`lifecycleInput` parses it).
   * Not for a run that continues as new: its successor carries the hook to the chain's end.
   */
  onComplete?: LifecycleHookTarget;
  /**
   * Started as a run in the transaction that fails or cancels a run of this workflow, with
   * `{ id, workflow, status: "failed" | "cancelled", error }` as its input.
   */
  onFailure?: LifecycleHookTarget;
}

/** The events a webhook may receive: a run's end, and `run.waiting` when asked for. */
export type WebhookEvent = "run.completed" | "run.failed" | "run.cancelled" | "run.waiting";

/** An endpoint `createDurable({ webhooks })` sends run events to, signed as Standard Webhooks. */
export interface WebhookEndpoint {
  /** An http(s) URL; each delivery is a POST of `{ type, timestamp, data }`. */
  url: string;
  /** Which events it receives (at least one). */
  events: readonly WebhookEvent[];
  /** `whsec_` followed by base64 (24 bytes or more): the key each delivery is signed with. */
  secret: string;
  /** Attempts per delivery before its run fails (1–50, default 10). */
  attempts?: number;
  /** The delay after the first failed attempt, doubled after each (default "30s", at most 6 hours). */
  retryDelay?: Duration;
}
