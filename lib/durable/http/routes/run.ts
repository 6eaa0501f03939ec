import { RunNotFoundError } from "../../errors";
import { runIdOf } from "./request-input";
import { allowOnly, json, type RouteContext } from "./route-context";
import type { Methods, RunContext, RunHandler } from "./types";

/**
 * `GET /api/durable/runs/{id}`: a run's status, for its status token or the admin bearer; an
 * unknown run and a refused one are the same 404. The read heals a run whose owner died, and a
 * run due by the database clock is advanced after the answer, so a page that polls its run
 * (`useDurableRun`) moves it along with no cron.
 */
export function runRoute(ctx: RouteContext): Methods<RunHandler> {
  return allowOnly<RunHandler>({
    GET: ctx.guard(async (request, context: RunContext) => {
      const startedAt = Date.now();
      const id = await runIdOf(context);
      const durable = await ctx.durable();
      // Authorise before reading, because the read heals.
      const read = ctx.mayRead(request, durable, id) ? await durable.inspect(id) : null;
      if (!read) throw new RunNotFoundError(id);
      // Only a run that is due by the database clock is worth a claim after the answer.
      if (read.due) ctx.advanceAfterResponse(durable, id, startedAt);
      return json(200, read.status);
    }),
  });
}
