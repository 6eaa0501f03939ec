import { createAppDurable } from "@/lib/durable";
import { createChatRoutes } from "@/lib/durable/ai";
import { createDurableRoutes } from "@/lib/durable/next";
import { ensureAppSchema } from "@/db/app-schema";
import { authorizeChat } from "./chat/session";
import { attachProviderDb } from "./mock-providers/db";
import { approval } from "./workflows/approval";
import { checkout } from "./workflows/checkout";
import { hello } from "./workflows/hello";
import { nightlyDigest } from "./workflows/nightly-digest";
import { order } from "./workflows/order";
import { orderPayment } from "./workflows/order-payment";
import { orderShipping } from "./workflows/order-shipping";
import { outboxDelivery } from "./workflows/outbox-delivery";
import { planApproval } from "./workflows/plan-approval";
import { release } from "./workflows/release";
import { reportExport } from "./workflows/report-export";
import { research } from "./workflows/research";
import { supportChat } from "./workflows/support-chat";

/** The workflows this app runs: register a new one here and every route knows it. */
export const workflows = [
  hello,
  approval,
  checkout,
  planApproval,
  outboxDelivery,
  reportExport,
  research,
  nightlyDigest,
  order,
  orderPayment,
  orderShipping,
  supportChat,
  release,
];

/** The app's durable instance (one database handle per process; see createAppDurable). */
export const getDurable = createAppDurable({
  workflows,
  // The app's own tables (mock providers, shop), then the providers may use the handle.
  async setup(db) {
    await ensureAppSchema(db);
    attachProviderDb(db);
  },
});

/** The handlers mounted by app/api/durable/**; maxDuration matches what the route files export. */
export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });

/**
 * The support chat's routes (app/api/chat/**, docs/guide/chat.md): each turn a run of supportChat;
 * a request may read or write a chat when it carries the session cookie that made it (app/chat/session.ts).
 */
export const chatRoutes = createChatRoutes(getDurable, {
  workflow: supportChat,
  authorize: authorizeChat,
  maxDuration: 60,
});
