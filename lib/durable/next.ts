// Entry point for Next.js route handlers: `createDurableRoutes` mounts the HTTP contract.
export { createDurableRoutes } from "./http/routes/create-durable-routes";
export { type DurableRoutes, type DurableRoutesOptions, MAX_BODY_BYTES } from "./http/routes/types";
export { type DevCronOptions, startDevCron } from "./http/dev-cron";
export { createChatRoutes } from "./ai/http/chat";
export { guardRoute } from "./http/routes/route-context";
export type {
  ChatAuthorize,
  ChatContext,
  ChatRoutes,
  ChatRoutesOptions,
} from "./ai/http/chat-types";
