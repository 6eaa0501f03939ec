import { type AnyKysely, connect } from "../drivers/connect";
import { createDurable, type Durable, type DurableOptions } from "./create-durable";

export interface AppDurableOptions extends Omit<DurableOptions, "db"> {
  /** Runs once after the migration, on the fresh handle: the app's own tables, say. */
  setup?: (db: AnyKysely) => Promise<void>;
  /** Database URL; default DATABASE_URL, unset: PGlite in ./.durable/ (development). */
  url?: string;
}

const DB_KEY = Symbol.for("durable-next.app.db");
type Holder = typeof globalThis & { [DB_KEY]?: Promise<AnyKysely> };

/**
 * The durable instance of a Next.js app, for its route handlers and server code. The database
 * handle is one per process, kept on globalThis so dev reloads reuse it (two PGlite instances on
 * one data dir would corrupt it), migrated when first opened; a failed open is not cached, so the
 * next request tries again. The instance itself is per module evaluation, so a dev reload picks up
 * edited workflows.
 *
 * @example
 * // app/durable.ts
 * export const getDurable = createAppDurable({ workflows: [welcome] });
 * export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
 */
export function createAppDurable(options: AppDurableOptions): () => Promise<Durable> {
  const { setup, url, ...durableOptions } = options;
  // Tunable per deployment without a code change (docs/guide/scaling-out.md, "Scaling out").
  durableOptions.tickConcurrency ??= envNumber("DURABLE_TICK_CONCURRENCY");
  let instance: Promise<Durable> | undefined;
  return () => {
    if (!instance) {
      const creating = sharedDb(url, setup).then((db) => createDurable({ ...durableOptions, db }));
      instance = creating;
      creating.catch(() => {
        if (instance === creating) instance = undefined;
      });
    }
    return instance;
  };
}

function sharedDb(url: string | undefined, setup: AppDurableOptions["setup"]): Promise<AnyKysely> {
  const holder = globalThis as Holder;
  let opening = holder[DB_KEY];
  if (!opening) {
    opening = (async () => {
      const db = await connect(url);
      try {
        await createDurable({ db, workflows: [] }).migrate();
        await setup?.(db);
        return db;
      } catch (error) {
        await db.destroy().catch(() => {});
        throw error;
      }
    })();
    holder[DB_KEY] = opening;
    opening.catch(() => {
      if (holder[DB_KEY] === opening) delete holder[DB_KEY];
    });
  }
  return opening;
}

/** A number from the environment; unset or empty: undefined (createDurable checks the range). */
function envNumber(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined || value === "" ? undefined : Number(value);
}
