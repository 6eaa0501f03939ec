import { MAX_CALLBACK_BYTES } from "../../engine/callbacks";
import { InvalidInputError, ResultTooLargeError } from "../../errors";
import { readBody } from "./request-input";
import { allowOnly, HttpRefusal, json, type RouteContext } from "./route-context";
import type { CallbackContext, CallbackHandler, Methods } from "./types";

/** The body as JSON, or 422: a callback's payload is JSON or nothing is delivered. */
function payloadOf(raw: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw new InvalidInputError("the callback's body is not valid JSON");
  }
}

/** The delivery's idempotency key: `Idempotency-Key`, else a webhook sender's `webhook-id`. */
const deliveryKeyOf = (request: Request): string | undefined =>
  request.headers.get("idempotency-key") ?? request.headers.get("webhook-id") ?? undefined;

/** JSON that grows when written again (`1e20` → 21 digits) is still a payload over the cap: 413. */
function overCap(e: unknown): never {
  if (!ResultTooLargeError.is(e)) throw e;
  throw new HttpRefusal(413, "payload_too_large", `the callback's payload is larger than ${MAX_CALLBACK_BYTES} bytes`);
}

/**
 * `POST /api/durable/callback/{token}` (docs/guide/http-routes.md, "Callback URLs"): the token is
 * the whole credential, checked by `durable.completeCallback`, which answers a malformed, forged
 * and unknown token with the same 404. The body is capped (413) before it is parsed; it must be
 * JSON (422) and fit the callback's schema (422). 202 when delivered, and the run is advanced after
 * the answer; 200 `alreadyDelivered` for a repeat of the delivery's key; 409 once the callback
 * resolved, timed out or its run ended. The answer names no run: the token holder learns nothing.
 */
export function callbackRoute(ctx: RouteContext): Methods<CallbackHandler> {
  return allowOnly<CallbackHandler>({
    POST: ctx.guard(async (request, context: CallbackContext) => {
      const startedAt = Date.now();
      const raw = await readBody(request, Math.min(ctx.maxBody, MAX_CALLBACK_BYTES));
      const { token } = await context.params;
      const payload = payloadOf(raw);
      const id = deliveryKeyOf(request);
      const durable = await ctx.durable();
      const result = await durable.completeCallback(token, payload, id === undefined ? {} : { id }).catch(overCap);
      if (result.delivered) ctx.advanceAfterResponse(durable, result.runId, startedAt);
      return json(result.delivered ? 202 : 200, {
        ok: true,
        delivered: result.delivered,
        alreadyDelivered: result.alreadyDelivered,
      });
    }),
  });
}
