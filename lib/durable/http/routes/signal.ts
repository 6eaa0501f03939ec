import * as z from "zod";
import { parseWebhookSecrets, verifyWebhook } from "../../auth/webhook";
import { UnauthorizedError } from "../../errors";
import { parseJson, parseWith, readBody, storedName } from "./request-input";
import { allowOnly, HttpRefusal, json, type RouteContext } from "./route-context";
import type { Handler, Methods } from "./types";

const signalBody = z.object({
  runId: storedName,
  name: storedName,
  payload: z.unknown().optional(),
  /** Delivery id for dedup when the admin bearer is used; webhooks use `webhook-id`. */
  id: storedName.optional(),
  /**
   * A decision on an approval (docs/guide/approvals.md): with `actor`, the request is
   * `durable.decide({ runId, name, actor, approved, reason })`, checked there, and takes no payload.
   */
  actor: z.unknown().optional(),
  approved: z.unknown().optional(),
  reason: z.unknown().optional(),
  /** With `actor`, on `tool-approval`: the agent's tool call decided (docs/guide/approvals.md, "Tool approvals"). */
  toolCallId: z.unknown().optional(),
  turnId: z.unknown().optional(),
});

/**
 * Who may deliver a signal: a valid Standard Webhooks signature (DURABLE_SIGNAL_SECRET), whose
 * `webhook-id` is the delivery id, or else the admin bearer. Answers the delivery id, or null for
 * the admin bearer. A request that carries a signature, or no authorization at all, is a webhook.
 */
function authorizeSignal(ctx: RouteContext, request: Request, raw: Uint8Array): string | null {
  if (request.headers.has("webhook-signature") || !request.headers.has("authorization")) {
    let keys: Buffer[];
    try {
      keys = parseWebhookSecrets(ctx.secret("signal"));
    } catch (e) {
      if ((e as Error)?.name === "MissingSecretError") throw e;
      throw new HttpRefusal(503, "misconfigured", "DURABLE_SIGNAL_SECRET is not a list of whsec_ keys");
    }
    const nowSeconds = ctx.options.nowSeconds?.();
    const verdict = verifyWebhook({
      keys,
      headers: request.headers,
      body: raw,
      ...(nowSeconds === undefined ? {} : { nowSeconds }),
    });
    if (!verdict.ok) throw new UnauthorizedError(`webhook verification failed: ${verdict.reason.replace(/_/g, " ")}`);
    return verdict.id;
  }
  ctx.requireBearer(request, "durable");
  return null;
}

/**
 * `POST /api/durable/signal`: delivers one signal to a run, at most once per delivery id, and
 * advances the run after the answer when the signal was new (202 either way). A body with `actor`
 * is a decision on an approval instead (`decide()`: 403 for an actor the approvers refuse, 409
 * once the wait is decided), and advances the run when it completed the wait.
 */
export function signalRoute(ctx: RouteContext): Methods<Handler> {
  return allowOnly<Handler>({
    POST: ctx.guard(async (request) => {
      const startedAt = Date.now();
      const raw = await readBody(request, ctx.maxBody); // 413 before any HMAC
      const deliveryId = authorizeSignal(ctx, request, raw);
      const body = parseWith(signalBody, parseJson(raw), "signal request");
      const durable = await ctx.durable();
      if (body.actor !== undefined) {
        const decided = await durable.decide({
          runId: body.runId,
          name: body.name,
          actor: body.actor as string,
          approved: body.approved as boolean,
          ...(body.reason === undefined ? {} : { reason: body.reason as string }),
          ...(body.toolCallId === undefined ? {} : { toolCallId: body.toolCallId as string }),
          ...(body.turnId === undefined ? {} : { turnId: body.turnId as string }),
        });
        if (decided.completed) ctx.advanceAfterResponse(durable, body.runId, startedAt);
        return json(202, decided);
      }
      const id = deliveryId ?? body.id;
      const result = await durable.signal({
        runId: body.runId,
        name: body.name,
        payload: body.payload ?? null,
        ...(id === undefined ? {} : { id }),
      });
      if (result.signalled) ctx.advanceAfterResponse(durable, body.runId, startedAt);
      return json(202, result);
    }),
  });
}
