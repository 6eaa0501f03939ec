import type { EventSource } from "../event-sources/types";

// The options and the shape of `createDurableRoutes` (docs/guide/http-routes.md): one entry per route
// file of the reference app, each a full set of method handlers.

/** Request bodies larger than this are refused with 413 before they are parsed or HMAC'd. */
export const MAX_BODY_BYTES = 256 * 1024;

export interface DurableRoutesOptions {
  /** Seconds: what the route files export as `maxDuration` (60). The budget when the platform gives no deadline. */
  maxDuration?: number;
  /** Kept free between the end of a budget and the deadline, to answer and flush (5000 ms). */
  budgetMarginMs?: number;
  /**
   * Defaults to the environment (DURABLE_SECRET, CRON_SECRET, DURABLE_SIGNAL_SECRET); give the
   * durable instance the same.
   */
  secrets?: { durable?: string; cron?: string; signal?: string };
  maxBodyBytes?: number;
  /**
   * Keeps post-response work alive (`waitUntil` of @vercel/functions; a no-op off Vercel, where the
   * work runs anyway).
   */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** The invocation's deadline (`getDeadline` of @vercel/functions; undefined off Vercel). */
  getDeadline?: () => Date | undefined;
  /** Our clock in seconds, for webhook timestamps (tests). */
  nowSeconds?: () => number;
  log?: (message: string) => void;
  /**
   * Fan-out: a tick that finds more due runs than it advances at once (the instance's
   * `tickConcurrency`) calls this same route up to `maxFanOut` more times, each claiming on its
   * own; those calls carry a hop header and do not fan out further. Default: DURABLE_MAX_FAN_OUT,
   * else 0 (docs/guide/scaling-out.md, "Fan-out").
   */
  maxFanOut?: number;
  /** How fan-out calls are sent (the global `fetch`; tests route them elsewhere). */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * The stream route: reads every `pollMs` (100) while nothing is new, at most `batch` chunks a
   * read (200), and a `: ping` comment after `pingMs` (15000) with nothing sent.
   */
  stream?: { pollMs?: number; pingMs?: number; batch?: number };
  /**
   * The senders `POST /api/durable/events/{source}` takes webhooks from, by the path's name
   * (docs/guide/provider-webhooks.md): `{ stripe: stripeSource(), acme: standardWebhooksSource({ secret }) }`.
   * Besides these, `stripe` and `github` exist when STRIPE_WEBHOOK_SECRET or GITHUB_WEBHOOK_SECRET is set.
   */
  eventSources?: Readonly<Record<string, EventSource>>;
}

/** What Next.js passes a dynamic route (`runs/[id]/…`) besides the request. */
export type RunContext = { params: Promise<{ id: string }> };
export type Handler = (request: Request) => Promise<Response>;
export type RunHandler = (request: Request, context: RunContext) => Promise<Response>;
/** What Next.js passes `callback/[token]` besides the request. */
export type CallbackContext = { params: Promise<{ token: string }> };
export type CallbackHandler = (request: Request, context: CallbackContext) => Promise<Response>;
/** What Next.js passes `events/[source]` besides the request. */
export type SourceContext = { params: Promise<{ source: string }> };
export type SourceHandler = (request: Request, context: SourceContext) => Promise<Response>;
export type Methods<H> = { GET: H; POST: H; PUT: H; PATCH: H; DELETE: H };

export interface DurableRoutes {
  /** GET: Vercel Cron, `Authorization: Bearer $CRON_SECRET` → 200 TickReport. */
  tick: Methods<Handler>;
  /** POST: Standard Webhooks or admin bearer → 202 `{ ok, signalled, alreadyDelivered }`. */
  signal: Methods<Handler>;
  /** GET: list (admin) · POST: start (admin) → 201 created / 200 existing. */
  runs: Methods<Handler>;
  /** GET: status, bearer status token or admin → 200 RunStatus; unknown and unauthorised → the same 404. */
  run: Methods<RunHandler>;
  /** POST (admin) → 200 RunStatus. */
  cancel: Methods<RunHandler>;
  /** POST (admin) → 200 RunStatus; the run is advanced after the answer. */
  retry: Methods<RunHandler>;
  /**
   * GET: the run's stream as Server-Sent Events, bearer status token or admin; unknown and
   * unauthorised → the same 404. From `Last-Event-ID` or `?from=` (the last seq the reader has);
   * `end` once the run is terminal; cut without `end` before the budget runs out.
   */
  stream: Methods<RunHandler>;
  /**
   * POST: a callback URL's delivery; the token in the path is the only credential → 202 delivered,
   * 200 `alreadyDelivered` for a repeat of its `Idempotency-Key` / `webhook-id`; unknown, forged
   * and malformed tokens → the same 404.
   */
  callback: Methods<CallbackHandler>;
  /**
   * POST: a provider's webhook, verified by the source's own signature and published as
   * `<source>.<type>` with the delivery id as the event id → 200 `{ ok, event, eventId, runs }`
   * (a redelivery too); 401 not authentic, 404 unknown source, 413 over the cap, 400 no event.
   */
  events: Methods<SourceHandler>;
  /**
   * GET: the metrics as Prometheus text (docs/guide/metrics.md), `Authorization: Bearer` the cron
   * or the admin secret → 200 `text/plain; version=0.0.4`; 401 otherwise.
   */
  metrics: Methods<Handler>;
  /** Resolves once every post-response advance started so far has settled (tests, scripts). */
  idle(): Promise<void>;
}
