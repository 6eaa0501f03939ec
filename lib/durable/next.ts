// Entry point for Next.js route handlers: `createDurableRoutes` mounts the HTTP contract.
export {
  createDurableRoutes,
  type DurableRoutes,
  type DurableRoutesOptions,
  MAX_BODY_BYTES,
} from "./http/routes";
export { type DevCronOptions, startDevCron } from "./http/dev-cron";
