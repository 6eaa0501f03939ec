// The PGlite instance behind a handle `connect()` opened on the embedded database, for a library
// that must run on the same single session (a Drizzle db: lib/durable/drizzle.ts).
import type { PGlite } from "@electric-sql/pglite";
import type { Kysely } from "kysely";

// Kysely<any>: connect.ts imports this file, so its AnyKysely alias is spelled out here.
type AnyKysely = Kysely<any>;

const EMBEDDED = new WeakMap<AnyKysely, PGlite>();

/** Records the PGlite instance behind `db` (connect() calls it). */
export function registerPGlite(db: AnyKysely, pglite: PGlite): void {
  EMBEDDED.set(db, pglite);
}

/** The PGlite instance behind `db`; undefined for a handle on a server, or not made by connect(). */
export function embeddedPGliteOf(db: AnyKysely): PGlite | undefined {
  return EMBEDDED.get(db);
}
