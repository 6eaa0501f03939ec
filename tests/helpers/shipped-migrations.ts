import { type Kysely, sql } from "kysely";
import { migrations } from "@/lib/durable/store/migrations.generated";

/** The migrations apps applied before the function set (docs/sql.md, "How the functions are applied"). */
export const SHIPPED = migrations.filter((m) => Number(m.name.slice(0, 4)) <= 6);

/**
 * Installs the first `count` shipped migrations as the migrate() of their releases did: in one
 * transaction, durable_migrations created if missing, each text run as it is and its name recorded.
 * No function set, no durable_function_sets: what a database of those releases holds.
 */
export async function installShipped(db: Kysely<any>, count = SHIPPED.length): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`create table if not exists durable_migrations (
                name text primary key,
                applied_at timestamptz not null default now()
              )`.execute(trx);
    for (const migration of SHIPPED.slice(0, count)) {
      await sql.raw(migration.sql).execute(trx);
      await sql`insert into durable_migrations (name) values (${migration.name})`.execute(trx);
    }
  });
}

/** The transaction id that last wrote each durable_* function: a function rewritten gets a new one. */
export async function functionWriters(db: Kysely<any>): Promise<Record<string, string>> {
  const { rows } = await sql<{ fn: string; xmin: string }>`
    select p.oid::regprocedure::text as fn, p.xmin::text as xmin from pg_proc p
     where p.pronamespace = current_schema()::regnamespace and p.proname like 'durable\\_%'`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.fn, row.xmin]));
}
