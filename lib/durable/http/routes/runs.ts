import * as z from "zod";
import { InvalidInputError, WorkflowNotFoundError } from "../../errors";
import { runStatusValues } from "../../schemas";
import { parseJson, parseWith, readBody, storedName } from "./request-input";
import { allowOnly, json, type RouteContext } from "./route-context";
import type { Handler, Methods } from "./types";

const startBody = z.object({
  workflow: storedName,
  input: z.unknown().optional(),
  id: storedName.optional(),
  // Checked by start() (an integer a PostgreSQL integer holds): a 422 names the range.
  priority: z.unknown().optional(),
  // Checked by start() (at most 10, each 1–64 characters).
  tags: z.unknown().optional(),
});
const listQuery = z
  .object({
    status: z.array(runStatusValues).min(1).optional(),
    workflow: storedName.optional(),
    version: storedName.optional(),
    tag: z.string().min(1).max(64).optional(),
    parentId: storedName.optional(),
    metadata: z.string().max(16_384).optional(),
    createdAfter: z.string().max(64).optional(),
    createdBefore: z.string().max(64).optional(),
    beforePatch: storedName.optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
    cursor: z.string().min(1).max(1000).optional(),
  })
  .strict();

/**
 * The list's query parameters (docs/guide/http-routes.md, "Request bodies"): `status` may repeat
 * (or list several, comma-separated), every other parameter comes once; `metadata` is a JSON
 * object. An unknown parameter, a repeat or a bad value is a 422, before anything is read.
 */
function listOptionsOf(url: URL) {
  const raw: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    if (key === "status") raw.status = values.flatMap((value) => value.split(","));
    else if (values.length > 1) throw new InvalidInputError(`the query names ${key} ${values.length} times; once only`);
    else raw[key] = values[0];
  }
  const query = parseWith(listQuery, raw, "query");
  let metadata: Record<string, unknown> | undefined;
  if (query.metadata !== undefined) {
    try {
      metadata = JSON.parse(query.metadata);
    } catch {
      throw new InvalidInputError("the query's metadata is not JSON: pass a JSON object, URL-encoded");
    }
  }
  // durable.list checks the rest (a metadata that is not an object, a date that is not one).
  return { ...query, metadata };
}

/**
 * `/api/durable/runs`, admin only. GET lists runs a page at a time (filters in the query). POST
 * starts a run of a registered workflow: 201 when created, 200 when the id already named one; a
 * run due at once is advanced after the answer.
 */
export function runsRoute(ctx: RouteContext): Methods<Handler> {
  return allowOnly<Handler>({
    GET: ctx.guard(async (request) => {
      ctx.requireBearer(request, "durable");
      const query = listOptionsOf(new URL(request.url));
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
      const started = await durable.start(workflow, body.input, {
        ...(body.id === undefined ? {} : { id: body.id }),
        ...(body.priority === undefined ? {} : { priority: body.priority as number }),
        ...(body.tags === undefined ? {} : { tags: body.tags as string[] }),
      });
      const read = await durable.inspect(started.id);
      const status = read?.status;
      if (read?.due) ctx.advanceAfterResponse(durable, started.id, startedAt);
      return json(started.created ? 201 : 200, {
        id: started.id,
        created: started.created,
        ...(started.debounced ? { debounced: true } : {}),
        status: status?.status ?? "pending",
        statusToken: started.statusToken,
      });
    }),
  });
}
