import * as z from "zod";
import { parseJson, parseWith, readBody, runIdOf } from "./request-input";
import { allowOnly, json, type RouteContext } from "./route-context";
import type { Methods, RunContext, RunHandler } from "./types";

const cancelBody = z.object({
  reason: z.string().max(1000).optional(),
  children: z.enum(["cancel", "keep"]).optional(),
});

/**
 * `POST /api/durable/runs/{id}/cancel`, admin only: cancels a run that is not finished and
 * answers its status. The body is optional (`{ reason, children }`); an empty one means no reason,
 * and its non-terminal children are cancelled too unless `children` is "keep".
 */
export function cancelRoute(ctx: RouteContext): Methods<RunHandler> {
  return allowOnly<RunHandler>({
    POST: ctx.guard(async (request, context: RunContext) => {
      const raw = await readBody(request, ctx.maxBody);
      ctx.requireBearer(request, "durable");
      const id = await runIdOf(context);
      const body = parseWith(cancelBody, parseJson(raw, {}), "cancel request");
      const durable = await ctx.durable();
      return json(200, await durable.cancel(id, { reason: body.reason, children: body.children ?? "cancel" }));
    }),
  });
}
