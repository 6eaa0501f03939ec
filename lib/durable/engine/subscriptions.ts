// Which workflows an event starts (docs/guide/events.md, "Subscribing"): a workflow's `on` is
// checked when it is defined, and a publish computes its subscribers from the instance's
// registry, the newest version of each name, by name and `match` (jsonb `@>`, in process).
import { createHash } from "node:crypto";
import { InvalidInputError } from "../errors";
import type { EventMatch } from "../event-types";
import { jsonContains, toJsonText } from "../json";
import { isStorableName, MAX_NAME_LENGTH, NAME_RULE } from "../names";
import type { AnyWorkflow } from "../types";

/** A workflow's `on`, normalized. */
export interface Subscription {
  event: string;
  match?: EventMatch;
}

/** Refuses an `on` that is neither an event name nor `{ event, match? }` (InvalidInputError). */
export function validateSubscription(workflow: AnyWorkflow): void {
  if (workflow.on === undefined) return;
  const what = `workflow "${workflow.name}": on is an event name (${NAME_RULE}) or { event, match? }`;
  const on = workflow.on as unknown;
  const event = typeof on === "string" ? on : (on as { event?: unknown } | null)?.event;
  if (!isStorableName(event)) throw new InvalidInputError(what);
  if (typeof on === "object") checkMatch((on as { match?: unknown }).match, `workflow "${workflow.name}": on.match`);
  if (workflow.debounce) {
    throw new InvalidInputError(`workflow "${workflow.name}": a workflow that debounces cannot subscribe to events`);
  }
}

/** Refuses a `match` that is not a plain JSON object (InvalidInputError); answers it as JSON. */
export function checkMatch(match: unknown, what: string): EventMatch | undefined {
  if (match === undefined) return undefined;
  if (
    match === null ||
    typeof match !== "object" ||
    Array.isArray(match) ||
    Object.getPrototypeOf(match) !== Object.prototype
  ) {
    throw new InvalidInputError(`${what} is a plain JSON object the event's data must contain`);
  }
  const json = toJsonText(match, { limit: 64 * 1024 });
  if (json === "{}" && Object.keys(match).length > 0) throw new InvalidInputError(`${what} holds no JSON value`);
  return JSON.parse(json) as EventMatch;
}

/** A workflow's subscription, if it has one. */
export function subscriptionOf(workflow: AnyWorkflow): Subscription | undefined {
  const { on } = workflow;
  if (on === undefined) return undefined;
  if (typeof on === "string") return { event: on };
  return on.match === undefined ? { event: on.event } : { event: on.event, match: checkMatch(on.match, "on.match") };
}

/** The workflows (the registry's newest version of each name) subscribed to event `name` with this data, by name. */
export function subscribersOf(newest: Iterable<AnyWorkflow>, name: string, data: unknown): AnyWorkflow[] {
  const subscribers: AnyWorkflow[] = [];
  for (const workflow of newest) {
    const subscription = subscriptionOf(workflow);
    if (subscription?.event !== name) continue;
    if (subscription.match !== undefined && !jsonContains(data, subscription.match)) continue;
    subscribers.push(workflow);
  }
  return subscribers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The id of the run an event starts for a workflow: `event:<workflow>/<event id>`, or, when that
 * is over 255 characters or the workflow's name holds a "/" (so two pairs could not be told
 * apart), `event:` and the SHA-256 (hex) of the pair. The same pair always answers the same id.
 */
export function eventRunId(eventId: string, workflow: string): string {
  const readable = `event:${workflow}/${eventId}`;
  if (!workflow.includes("/") && readable.length <= MAX_NAME_LENGTH) return readable;
  return `event:${createHash("sha256")
    .update(JSON.stringify([workflow, eventId]))
    .digest("hex")}`;
}
