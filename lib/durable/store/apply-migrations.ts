import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Arbitrary constant naming our advisory lock. Two cold starts that migrate at once queue on it
 * instead of racing `create table` (whose catalog inserts fail with unique violations when two
 * sessions create the same table concurrently).
 */
const MIGRATION_LOCK = 0x6475_7261_626c; // "durabl"

/** What migrate() installs: the numbered migrations and the SQL function set. */
export interface MigrationSource {
  migrations: ReadonlyArray<{ name: string; sql: string }>;
  functionSet: FunctionSet;
}

/** The files of lib/durable/store/sql/functions/, in the order they apply, and their revision. */
export interface FunctionSet {
  revision: number;
  sha256: string;
  files: ReadonlyArray<{ name: string; sql: string }>;
}

/**
 * Applies every migration not yet recorded, in order, then the SQL function set when its revision
 * is newer than the one the database recorded, all in one transaction under an advisory lock
 * (docs/sql.md, "How the functions are applied"): idempotent, and safe when several processes
 * migrate at once (the second waits, then finds nothing left to do). An older deployment, whose
 * set has a lower revision, never puts older function bodies back. Returns the names of the
 * migrations it applied. store/migrate.ts passes the generated module; tests pass other sets.
 */
export async function applyMigrations(db: DurableDb, source: MigrationSource): Promise<string[]> {
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
    const pending = source.migrations.filter((m) => !applied.has(m.name));
    for (const migration of pending) {
      // No parameters: the drivers send it as one simple-protocol script (plpgsql bodies included).
      await sql.raw(migration.sql).execute(trx);
      await sql`insert into durable_migrations (name) values (${migration.name})`.execute(trx);
    }
    await applyFunctionSet(trx, source.functionSet, pending.length > 0);
    return pending.map((m) => m.name);
  });
}

/**
 * Creates or replaces every function of the set when its revision is newer than the newest one
 * recorded in durable_function_sets (migration 0007), and records it; and again, at the same
 * revision, after a numbered migration: a session compiles a plpgsql function once, with the
 * types its tables' columns had then, and compiles it again only when the function is replaced.
 * Without that, a session of a running instance failed every call after 0013 typed columns with
 * domains ("type of parameter ... does not match that when preparing the plan"; docs/sql.md,
 * "Migration 0013"). Runs under the migration
 * lock, after the numbered migrations, so the tables the functions read exist. The set goes as one
 * script, in the order build:sql put the files (a function a SQL-language body calls comes first,
 * since PostgreSQL checks those bodies when it creates them).
 */
async function applyFunctionSet(trx: DurableDb, set: FunctionSet, migrated: boolean): Promise<void> {
  const { rows } = await sql<{ revision: number | null }>`
    select max(revision) as revision from durable_function_sets`.execute(trx);
  const recorded = rows[0]?.revision ?? 0;
  if (recorded > set.revision || (recorded === set.revision && !migrated)) return;
  await sql.raw(set.files.map((file) => file.sql).join("\n")).execute(trx);
  if (recorded === set.revision) return;
  await sql`insert into durable_function_sets (revision, sha256)
            values (${set.revision}, ${set.sha256})`.execute(trx);
}
