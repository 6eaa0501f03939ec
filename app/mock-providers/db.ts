import type { Kysely } from "kysely";

// The mock providers share the app's one database handle (PGlite allows one process per data dir).
// It is kept on globalThis, not in a module variable, because Next bundles each route separately:
// a module variable set by the instance that opened the database would be unset in the others.
const KEY = Symbol.for("durable-next.mock-providers.db");
type Holder = typeof globalThis & { [KEY]?: Kysely<any> };

/** Called once the app's tables exist (db/app-schema.ts). */
export function attachProviderDb(db: Kysely<any>): void {
  (globalThis as Holder)[KEY] = db;
}

/** The database the mock providers keep their state in; `getDurable()` opens it. */
export function providerDb(): Kysely<any> {
  const db = (globalThis as Holder)[KEY];
  if (!db) throw new Error("the mock providers' database is not open yet: await getDurable() first");
  return db;
}
