import { parseJson, readBody, runIdOf } from "./request-input";
import { allowOnly, json, type RouteContext } from "./route-context";
import type { Methods, RunContext, RunHandler } from "./types";

/**
 * `POST /api/durable/runs/{id}/retry`, admin only: puts a failed run back to pending, answers its
 * status, and advances it after the answer (a retried run is due at once).
 */
export function retryRoute(ctx: RouteContext): Methods<RunHandler> {
  return allowOnly<RunHandler>({
    POST: ctx.guard(async (request, context: RunContext) => {
      const startedAt = Date.now();
      const raw = await readBody(request, ctx.maxBody);
      ctx.requireBearer(request, "durable");
      const id = await runIdOf(context);
      parseJson(raw, {}); // no fields, but a malformed body is still a bad request
      const durable = await ctx.durable();
      const status = await durable.retry(id);
      ctx.advanceAfterResponse(durable, id, startedAt); // a retried run is due at once
      return json(200, status);
    }),
  });
}
