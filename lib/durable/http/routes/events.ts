import { isStorableName } from "../../names";
import { UnauthorizedError } from "../../errors";
import { eventSourceRegistry } from "../event-sources/registry";
import type { InboundVerdict } from "../event-sources/types";
import { readBody } from "./request-input";
import { allowOnly, HttpRefusal, json, type RouteContext } from "./route-context";
import type { Methods, SourceContext, SourceHandler } from "./types";

/** The event an authentic delivery carries, as `publish` takes it; 400 when it cannot be stored. */
function eventOf(source: string, verdict: InboundVerdict): { name: string; id: string; data: unknown } {
  if (typeof verdict !== "object" || verdict === null || typeof verdict.ok !== "boolean") {
    throw new Error(`event source "${source}" answered no verdict ({ ok: true, id, type, data } or { ok: false, … })`);
  }
  if (!verdict.ok) {
    if (verdict.status === 400) throw new HttpRefusal(400, "invalid_event", verdict.reason);
    throw new UnauthorizedError(verdict.reason);
  }
  const name = `${source}.${verdict.type}`;
  if (typeof verdict.type !== "string" || verdict.type === "" || !isStorableName(name)) {
    throw new HttpRefusal(400, "invalid_event", `the event's type makes no storable name: "${source}.<type>"`);
  }
  if (!isStorableName(verdict.id)) {
    throw new HttpRefusal(400, "invalid_event", "the delivery's id is not 1-255 characters without NUL");
  }
  return { name, id: verdict.id, data: verdict.data };
}

/**
 * `POST /api/durable/events/{source}` (docs/guide/provider-webhooks.md): a provider's webhook,
 * checked by the source's own signature scheme and published as `<source>.<type>` with the
 * provider's delivery id as the event id (a redelivery starts nothing twice). In this order, each
 * refusal before anything is written: 404 an unknown source, 413 a body over the cap (before any
 * HMAC), 503 a source without its secret, 401 a delivery that is not authentic, 400 one that is
 * but carries no publishable event, 422 data a subscriber's input schema refuses, 409 an id an
 * event of another name holds. 200 `{ ok, event, eventId, runs }` for a new delivery and a
 * redelivery alike; the runs it started are advanced after the answer.
 */
export function eventsRoute(ctx: RouteContext): Methods<SourceHandler> {
  const sourceOf = eventSourceRegistry(ctx.options.eventSources);
  return allowOnly<SourceHandler>({
    POST: ctx.guard(async (request, context: SourceContext) => {
      const startedAt = Date.now();
      const { source: name } = await context.params;
      const source = sourceOf(name);
      const body = await readBody(request, ctx.maxBody);
      const nowSeconds = ctx.options.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
      const verdict = await source.verify({ body, headers: request.headers, nowSeconds });
      const event = eventOf(name, verdict);
      const durable = await ctx.durable();
      const published = await durable.publish(event.name, event.data, {
        id: event.id,
        source: name,
      });
      for (const run of published.runs) ctx.advanceAfterResponse(durable, run.id, startedAt);
      return json(200, { ok: true, event: event.name, eventId: published.eventId, runs: published.runs });
    }),
  });
}
