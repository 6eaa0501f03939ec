import type { Handler, Methods, RunHandler } from "./types";

// The answers every route builds: JSON with no caching, refusals decided before the durable call,
// and 405 for the methods a route does not answer. The error codes of the taxonomy map to statuses
// in `../error-response.ts` only (docs/decisions.md, "Errors").

const HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

/** A JSON answer that no cache keeps. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...headers } });

/** An answer decided before the durable call: its status, code and message are the response. */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The given methods; every other one answers 405 with the error body and an `allow` header. */
export function allowOnly<H extends Handler | RunHandler>(handlers: Partial<Methods<H>>): Methods<H> {
  const allowed = Object.keys(handlers);
  const message = `this route answers ${allowed.join(" and ")} only`;
  const notAllowed = (async () =>
    json(405, { error: { code: "method_not_allowed", message } }, { allow: allowed.join(", ") })) as unknown as H;
  return { GET: notAllowed, POST: notAllowed, PUT: notAllowed, PATCH: notAllowed, DELETE: notAllowed, ...handlers };
}
