import { fanOutLimit, fanOutTicks, HOP_HEADER } from "../fan-out";
import { allowOnly, HttpRefusal, json, type RouteContext } from "./route-context";
import type { Handler, Methods } from "./types";

/** The tick's hop count: 0 from outside, 1 from a fanned-out call; anything else is 400. */
function hopOf(request: Request): number {
  const value = request.headers.get(HOP_HEADER);
  if (value === null) return 0;
  if (value !== "0" && value !== "1") {
    throw new HttpRefusal(400, "invalid_hop", `${HOP_HEADER} is 0 or 1 (a tick called by a tick)`);
  }
  return Number(value);
}

/**
 * `GET /api/durable/tick`, what Vercel Cron calls (docs/layout.md, "The path of a tick, file by
 * file"): advances due runs for the invocation's budget and answers the TickReport. A bad
 * `maxFanOut` throws here, when the routes are built, not on the first tick.
 */
export function tickRoute(ctx: RouteContext): Methods<Handler> {
  const maxFanOut = fanOutLimit(ctx.options.maxFanOut ?? process.env.DURABLE_MAX_FAN_OUT);
  return allowOnly<Handler>({
    GET: ctx.guard(async (request) => {
      const startedAt = Date.now();
      // Only the bearer counts: the cron's user agent, cookies and query strings prove nothing.
      ctx.requireBearer(request, "cron");
      const hop = hopOf(request);
      const durable = await ctx.durable();
      // Only a tick called from outside fans out: one called by a tick does not (no loops).
      const fannedOut = hop === 0 && maxFanOut > 0 ? await fanOutTicks(ctx, request, durable, maxFanOut) : 0;
      const report = await durable.tick({ budgetMs: ctx.budgetMs(startedAt) });
      return json(200, { ...report, fannedOut });
    }),
  });
}
