import type { Durable } from "../../engine/create-durable";
import { callbackRoute } from "./callback";
import { cancelRoute } from "./cancel";
import { retryRoute } from "./retry";
import { eventsRoute } from "./events";
import { metricsRoute } from "./metrics";
import { createRouteContext } from "./route-context";
import { runRoute } from "./run";
import { runsRoute } from "./runs";
import { signalRoute } from "./signal";
import { streamRoute } from "./stream";
import { tickRoute } from "./tick";
import type { DurableRoutes, DurableRoutesOptions } from "./types";

/**
 * Route-handler factories for the HTTP contract (docs/guide/http-routes.md): one file per route in
 * this folder, each over the one context `./route-context.ts` builds (the durable instance, the
 * secrets, the auth checks, the error mapping, the work after the answer).
 *
 * Builds the handlers over the app's durable instance; `getDurable` is awaited per request, so it
 * may open lazily.
 *
 * @example
 * // app/durable.ts
 * export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
 * // app/api/durable/tick/route.ts
 * export const maxDuration = 60;
 * export const { GET, POST, PUT, PATCH, DELETE } = routes.tick;
 */
export function createDurableRoutes(
  getDurable: () => Promise<Durable>,
  options: DurableRoutesOptions = {},
): DurableRoutes {
  const ctx = createRouteContext(getDurable, options);
  return {
    tick: tickRoute(ctx),
    signal: signalRoute(ctx),
    runs: runsRoute(ctx),
    run: runRoute(ctx),
    cancel: cancelRoute(ctx),
    retry: retryRoute(ctx),
    stream: streamRoute(ctx),
    callback: callbackRoute(ctx),
    events: eventsRoute(ctx),
    metrics: metricsRoute(ctx),
    idle: () => ctx.idle(),
  };
}
