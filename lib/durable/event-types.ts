// The types of events (docs/guide/events.md): what a workflow subscribes to, what
// `ctx.step.waitForEvent` takes, and what `durable.publish` takes and answers. Vocabulary like
// signal-types.ts: types.ts re-exports it, and it imports only types from libraries.
import type { Transaction } from "kysely";

/** A JSON object an event's data must contain (jsonb `@>`: nested objects by their keys, arrays by their elements). */
export type EventMatch = Record<string, unknown>;

/** `defineWorkflow({ on })`: an event name, or a name and a `match` its data must contain. */
export type EventSubscription = string | { event: string; match?: EventMatch };

/** What `defineWorkflow` takes for events. */
export interface EventSubscriber {
  /**
   * Starts a run of this workflow for each event of this name published (`durable.publish`),
   * with the event's data as its input, in the publish's transaction (docs/guide/events.md).
   */
  on?: EventSubscription;
}

export interface WaitForEventOptions {
  /** A JSON object the event's data must contain; other events of the name are not for this wait. */
  match?: EventMatch;
  /** How long to wait (a number of ms or "30s", "5m", ...); then the wait answers null. None: forever. */
  timeout?: number | string;
  /**
   * "wait" (default): events published from the pass that reached the wait on; "run": from the
   * run's start on, so an event published before the wait (but after the run started) is taken.
   */
  since?: "wait" | "run";
}

/** The step that waits for an event: a member of `ctx.step`. */
export interface EventSteps {
  /**
   * Waits for the next event `name` whose data contains `options.match`, published since the
   * wait began (or the run started, with `since: "run"`): its data, journaled under step `id`;
   * null once `timeout` passed first (docs/guide/events.md).
   */
  waitForEvent<T = unknown>(id: string, name: string, options?: WaitForEventOptions): Promise<T | null>;
}

/** An app's transaction `publish` may write in: a Kysely transaction, or a Drizzle one (`durable-next/drizzle`). */
export type PublishTransaction = Transaction<any> | { execute(query: any): PromiseLike<unknown> };

export interface PublishOptions {
  /** The event's id, 1 to 255 characters (default a new uuid): a publish of an id published before starts nothing. */
  id?: string;
  /** The app's transaction: the event and its runs commit or roll back with the app's writes. */
  tx?: PublishTransaction;
  /** Who published it, stored with the event (the inbound webhook route sets the provider's name). */
  source?: string;
}

export interface PublishResult {
  eventId: string;
  /**
   * The run started for each subscribed workflow; for an id published before, the runs that event
   * started for the workflows subscribed now.
   */
  runs: Array<{ workflow: string; id: string }>;
}
