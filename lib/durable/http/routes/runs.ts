import * as z from "zod";
import { WorkflowNotFoundError } from "../../errors";
import { runStatusValues } from "../../schemas";
import { parseJson, parseWith, readBody, storedName } from "./request-input";
import { allowOnly, json, type RouteContext } from "./route-context";
import type { Handler, Methods } from "./types";

const startBody = z.object({
  workflow: storedName,
  input: z.unknown().optional(),
  id: storedName.optional(),
});
const listQuery = z.object({
  status: runStatusValues.optional(),
  workflow: storedName.optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().min(1).max(1000).optional(),
});

/**
 * `/api/durable/runs`, admin only. GET lists runs a page at a time (filters in the query). POST
 * starts a run of a registered workflow: 201 when created, 200 when the id already named one; a
 * run due at once is advanced after the answer.
 */
export function runsRoute(ctx: RouteContext): Methods<Handler> {
  return allowOnly<Handler>({
    GET: ctx.guard(async (request) => {
      ctx.requireBearer(request, "durable");
      const query = parseWith(listQuery, Object.fromEntries(new URL(request.url).searchParams), "query");
      const durable = await ctx.durable();
      return json(200, await durable.list(query));
    }),
    POST: ctx.guard(async (request) => {
      const startedAt = Date.now();
      const raw = await readBody(request, ctx.maxBody);
      ctx.requireBearer(request, "durable");
      const body = parseWith(startBody, parseJson(raw), "start request");
      const durable = await ctx.durable();
      const workflow = durable.workflows.get(body.workflow);
      if (!workflow) throw new WorkflowNotFoundError(body.workflow);
      const started = await durable.start(workflow, body.input, body.id === undefined ? {} : { id: body.id });
      const read = await durable.inspect(started.id);
      const status = read?.status;
      if (read?.due) ctx.advanceAfterResponse(durable, started.id, startedAt);
      return json(started.created ? 201 : 200, {
        id: started.id,
        created: started.created,
        status: status?.status ?? "pending",
        statusToken: started.statusToken,
      });
    }),
  });
}
