import { PROMETHEUS_CONTENT_TYPE, toPrometheusText } from "../prometheus";
import { allowOnly, type RouteContext } from "./route-context";
import type { Handler, Methods } from "./types";

/**
 * `GET /api/durable/metrics` (docs/guide/metrics.md): one scrape, one statement, as Prometheus
 * text. The cron secret (what a scheduler already holds) or the admin secret; 401 otherwise.
 */
export function metricsRoute(ctx: RouteContext): Methods<Handler> {
  return allowOnly<Handler>({
    GET: ctx.guard(async (request) => {
      ctx.requireBearer(request, ["cron", "durable"]);
      const durable = await ctx.durable();
      const text = toPrometheusText(await durable.metrics());
      return new Response(text, {
        status: 200,
        headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" },
      });
    }),
  });
}
