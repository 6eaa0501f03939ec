// Entry point for Next.js route handlers: `createDurableRoutes` mounts the HTTP contract.
export { createDurableRoutes } from "./http/routes/create-durable-routes";
export { type DurableRoutes, type DurableRoutesOptions, MAX_BODY_BYTES } from "./http/routes/types";
export { type DevCronOptions, startDevCron } from "./http/dev-cron";
export { guardRoute } from "./http/routes/route-context";
// Provider webhooks in, POST /api/durable/events/{source} (docs/guide/provider-webhooks.md).
export { stripeSource, type StripeSourceOptions } from "./http/event-sources/stripe";
export { githubSource, type GithubSourceOptions } from "./http/event-sources/github";
export {
  standardWebhooksSource,
  type StandardWebhooksSourceOptions,
} from "./http/event-sources/standard-webhooks";
export type { EventSource, InboundDelivery, InboundVerdict, SourceSecret } from "./http/event-sources/types";
// The ai wing's chat routes, from before it had its own entry (durable-next/ai).
export {
  /** @deprecated import from "durable-next/ai" */
  createChatRoutes,
} from "./ai/http/chat";
export type {
  /** @deprecated import from "durable-next/ai" */
  ChatAuthorize,
  /** @deprecated import from "durable-next/ai" */
  ChatContext,
  /** @deprecated import from "durable-next/ai" */
  ChatRoutes,
  /** @deprecated import from "durable-next/ai" */
  ChatRoutesOptions,
} from "./ai/http/chat-types";
