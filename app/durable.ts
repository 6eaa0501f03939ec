import type { Kysely } from "kysely";
import { connect, createDurable, type Durable } from "@/lib/durable";
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

// One database handle per process, kept on globalThis so dev reloads reuse it (two PGlite
// instances on one data dir would corrupt it). Migrated once, when first opened.
const DB_KEY = Symbol.for("durable-next.app.db");
type Holder = typeof globalThis & { [DB_KEY]?: Promise<Kysely<any>> };

function sharedDb(): Promise<Kysely<any>> {
  const holder = globalThis as Holder;
  let opening = holder[DB_KEY];
  if (!opening) {
    opening = (async () => {
      const db = await connect();
      try {
        await createDurable({ db, workflows: [] }).migrate();
        // The demo's own tables (mock providers, shop): a real app creates its tables its own way.
        await ensureMockProviderSchema(db);
        return db;
      } catch (e) {
        await db.destroy().catch(() => {});
        throw e;
      }
    })();
    holder[DB_KEY] = opening;
    // A failed open is not cached: the next request tries again.
    opening.catch(() => {
      if (holder[DB_KEY] === opening) delete holder[DB_KEY];
    });
  }
  return opening;
}

// The instance itself is per module evaluation, so a dev reload picks up edited workflows; it is
// only a registry and settings over the shared handle.
let instance: Promise<Durable> | undefined;

/** The app's durable instance, over the process's one database handle. */
export function getDurable(): Promise<Durable> {
  if (!instance) {
    const creating = sharedDb().then((db) => createDurable({ db, workflows }));
    instance = creating;
    creating.catch(() => {
      if (instance === creating) instance = undefined;
    });
  }
  return instance;
}

/** The handlers mounted by app/api/durable/**; maxDuration matches what the route files export. */
export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
