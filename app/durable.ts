import { createAppDurable } from "@/lib/durable";
import { createDurableRoutes } from "@/lib/durable/next";
import { ensureMockProviderSchema } from "./mock-providers/schema";
import { approval } from "./workflows/approval";
import { checkout } from "./workflows/checkout";
import { hello } from "./workflows/hello";
import { outboxDelivery } from "./workflows/outbox-delivery";
import { planApproval } from "./workflows/plan-approval";
import { reportExport } from "./workflows/report-export";

/** The workflows this app runs: register a new one here and every route knows it. */
export const workflows = [hello, approval, checkout, planApproval, outboxDelivery, reportExport];

/** The app's durable instance (one database handle per process; see createAppDurable). */
export const getDurable = createAppDurable({
  workflows,
  // The demo's own tables (mock providers, shop): a real app creates its tables its own way.
  setup: ensureMockProviderSchema,
});

/** The handlers mounted by app/api/durable/**; maxDuration matches what the route files export. */
export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
