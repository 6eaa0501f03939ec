// The contract of an event source (docs/guide/provider-webhooks.md, "Your own source"): what
// `POST /api/durable/events/{source}` hands a source, and what the source answers.

/** A delivery as the route received it, before anything is trusted. */
export interface InboundDelivery {
  /** The raw body, exactly as received (at most the routes' body cap): the signature covers these bytes. */
  readonly body: Uint8Array;
  readonly headers: Headers;
  /** Our clock, in whole seconds, for a signed timestamp's tolerance. */
  readonly nowSeconds: number;
}

/**
 * A source's answer. Authentic: the event to publish as `<source>.<type>`, with `id` (the
 * provider's delivery id) as its event id, so a redelivery starts nothing twice. Refused: 401 for a
 * delivery that is not authentic (no signature, a wrong one, a stale timestamp), 400 for an
 * authentic one the route cannot publish (not JSON, no type or id); `reason` is the answer's message.
 */
export type InboundVerdict =
  | { ok: true; id: string; type: string; data: unknown }
  | { ok: false; status: 400 | 401; reason: string };

/**
 * One sender of webhooks: checks a delivery by its own signature scheme and says which event it
 * carries. Built in: `stripeSource`, `githubSource`, `standardWebhooksSource`. A source is given
 * to `createDurableRoutes(getDurable, { eventSources: { name: source } })`; a source that throws
 * is answered 500 (logged), one missing its secret 503.
 */
export interface EventSource {
  verify(delivery: InboundDelivery): InboundVerdict | Promise<InboundVerdict>;
}

/** The secret of a built-in source: one secret, or a list of them, any of which verifies (rotation). */
export type SourceSecret = string | readonly string[];
