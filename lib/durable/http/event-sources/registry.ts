// Which sources `POST /api/durable/events/{source}` knows (docs/guide/provider-webhooks.md,
// "Configuring the sources"): those given to createDurableRoutes, and Stripe and GitHub when their
// variable is set.
import { InvalidInputError } from "../../errors";
import { HttpRefusal } from "../routes/route-context";
import { githubSource } from "./github";
import { stripeSource } from "./stripe";
import type { EventSource } from "./types";

/** A source's name, the path segment and the prefix of its events' names: no dot, which ends it. */
export const SOURCE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The built-in sources that exist by their variable alone, each reading it at each delivery. */
const FROM_ENV: Readonly<Record<string, { envName: string; make: () => EventSource }>> = {
  stripe: { envName: "STRIPE_WEBHOOK_SECRET", make: () => stripeSource() },
  github: { envName: "GITHUB_WEBHOOK_SECRET", make: () => githubSource() },
};

/**
 * Checks the app's `eventSources` once, when the routes are built (a bad name or a value with no
 * `verify` is a mistake in code: InvalidInputError), and answers the lookup of a path's source.
 * A name neither given nor enabled by its variable is 404 `event_source_not_found`.
 */
export function eventSourceRegistry(given: Readonly<Record<string, EventSource>> = {}): (name: string) => EventSource {
  if (typeof given !== "object" || given === null) throw new InvalidInputError("eventSources must be an object");
  for (const [name, source] of Object.entries(given)) {
    if (!SOURCE_NAME.test(name)) {
      throw new InvalidInputError(`event source name ${JSON.stringify(name)} is not 1-64 letters, digits, _ or -`);
    }
    if (typeof (source as Partial<EventSource> | null)?.verify !== "function") {
      throw new InvalidInputError(`event source "${name}" has no verify(delivery) function`);
    }
  }
  const fromEnv = new Map<string, EventSource>();
  return (name) => {
    if (Object.hasOwn(given, name)) return given[name]!;
    const builtIn = Object.hasOwn(FROM_ENV, name) ? FROM_ENV[name]! : undefined;
    if (builtIn && process.env[builtIn.envName]) {
      if (!fromEnv.has(name)) fromEnv.set(name, builtIn.make());
      return fromEnv.get(name)!;
    }
    const hint = builtIn ? ` (set ${builtIn.envName} to take its webhooks)` : "";
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    throw new HttpRefusal(404, "event_source_not_found", `no event source is named ${shown}${hint}`);
  };
}
