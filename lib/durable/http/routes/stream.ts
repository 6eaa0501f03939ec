import { RunNotFoundError } from "../../errors";
import { runEventStream, SSE_HEADERS } from "../sse";
import { runIdOf, seqOf } from "./request-input";
import { allowOnly, type RouteContext } from "./route-context";
import type { Methods, RunContext, RunHandler } from "./types";

/**
 * Where a stream read resumes: the last seq the reader has, from `Last-Event-ID` (what a
 * reconnecting reader sends; it wins over the query) or `?from=`, else 0. A whole number or 400.
 */
function resumePoint(request: Request): number {
  const header = request.headers.get("last-event-id");
  const [value, what] =
    header !== null && header !== ""
      ? [header, "Last-Event-ID"]
      : [new URL(request.url).searchParams.get("from"), "from"];
  return value === null ? 0 : seqOf(value, what);
}

/**
 * `GET /api/durable/runs/{id}/stream`: the run's stream as Server-Sent Events (docs/model.md,
 * "Run streams"), for its status token or the admin bearer; an unknown run and a refused one are
 * the same 404. It answers after its first read; `../sse.ts` writes the events that follow.
 */
export function streamRoute(ctx: RouteContext): Methods<RunHandler> {
  const pollMs = ctx.options.stream?.pollMs ?? 100;
  const pingMs = ctx.options.stream?.pingMs ?? 15_000;
  const batch = ctx.options.stream?.batch ?? 200;
  return allowOnly<RunHandler>({
    GET: ctx.guard(async (request, context: RunContext) => {
      const startedAt = Date.now();
      const id = await runIdOf(context);
      const durable = await ctx.durable();
      if (!ctx.mayRead(request, durable, id)) throw new RunNotFoundError(id);
      const after = resumePoint(request);
      const first = await durable.readStream(id, { after, limit: batch });
      if (!first) throw new RunNotFoundError(id);
      const body = runEventStream({
        read: (from) => durable.readStream(id, { after: from, limit: batch }),
        after,
        first,
        batch,
        pollMs,
        pingMs,
        // The budget the other routes give the engine: the reader resumes in a fresh invocation.
        stopAt: Date.now() + ctx.budgetMs(startedAt),
        signal: request.signal,
        log: ctx.log,
      });
      return new Response(body, { status: 200, headers: SSE_HEADERS });
    }),
  });
}
