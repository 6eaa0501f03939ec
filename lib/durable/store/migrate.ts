import { sql } from "kysely";
import { migrations } from "./migrations.generated";
import type { DurableDb } from "./tables";

/**
 * Arbitrary constant naming our advisory lock. Two cold starts that migrate at once queue on it
 * instead of racing `create table` (whose catalog inserts fail with unique violations when two
 * sessions create the same table concurrently).
 */
const MIGRATION_LOCK = 0x6475_7261_626c; // "durabl"

/**
 * Applies every migration not yet recorded, in order, in one transaction under an advisory lock:
 * idempotent, and safe when several processes migrate at once (the second waits, then finds
 * nothing left to do). Returns the names it applied.
 */
export async function migrate(db: DurableDb): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql.raw(`select pg_advisory_xact_lock(${MIGRATION_LOCK})`).execute(trx);
    await sql
      .raw(
        `create table if not exists durable_migrations (
           name text primary key,
           applied_at timestamptz not null default now()
         )`,
      )
      .execute(trx);
    const { rows } = await sql<{ name: string }>`select name from durable_migrations`.execute(trx);
    const applied = new Set(rows.map((row) => row.name));
    const pending = migrations.filter((m) => !applied.has(m.name));
    for (const migration of pending) {
      // No parameters: the drivers send it as one simple-protocol script (plpgsql bodies included).
      await sql.raw(migration.sql).execute(trx);
      await sql`insert into durable_migrations (name) values (${migration.name})`.execute(trx);
    }
    return pending.map((m) => m.name);
  });
}
