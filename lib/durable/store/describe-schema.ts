import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * The durable_* objects of a database as deterministic text (docs/sql.md, "How the functions are
 * applied"): each durable_* domain with its checks (0013), each table with its columns (type,
 * not null, default) in column order, its constraints, indexes and triggers by name, then every
 * function by name and signature, as PostgreSQL prints them back. `schema.snapshot.sql` is this
 * text for a fresh install on PGlite (scripts/build-sql-module.ts writes and checks it);
 * tests/postgres/schema-upgrade.test.ts compares it between an upgraded database and a fresh one.
 * Not-null constraints are left out of the constraints (PostgreSQL 18 lists them there, 15 does
 * not): the columns say them.
 */
export async function describeSchema(db: DurableDb): Promise<string> {
  const tables = await listTables(db);
  const parts: string[] = [await describeDomains(db)];
  for (const table of tables) parts.push(await describeTable(db, table));
  const functions = await sql<{ def: string }>`
    select pg_get_functiondef(p.oid) as def from pg_proc p
     where p.pronamespace = current_schema()::regnamespace and p.proname like 'durable\\_%'
     order by p.proname, pg_get_function_identity_arguments(p.oid)`.execute(db);
  for (const { def } of functions.rows) parts.push(`${def.trimEnd()};\n`);
  return `${parts.join("\n")}`;
}

/** The domains the columns are typed with (0013), each with its base type and its checks. */
async function describeDomains(db: DurableDb): Promise<string> {
  const { rows } = await sql<{ line: string }>`
    select format('create domain %I as %s;', t.typname, format_type(t.typbasetype, t.typtypmod))
           || coalesce((select string_agg(format(E'\\nalter domain %I add constraint %I %s;', t.typname, c.conname,
                                                 pg_get_constraintdef(c.oid)), '' order by c.conname)
                          from pg_constraint c where c.contypid = t.oid), '') as line
      from pg_type t
     where t.typnamespace = current_schema()::regnamespace and t.typtype = 'd' and t.typname like 'durable\\_%'
     order by t.typname`.execute(db);
  return rows.map((row) => `${row.line}\n`).join("");
}

async function listTables(db: DurableDb): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c
     where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and c.relname like 'durable\\_%'
     order by c.relname`.execute(db);
  return rows.map((row) => row.name);
}

/** One table: `create table` with its columns, then its constraints, indexes and triggers. */
async function describeTable(db: DurableDb, table: string): Promise<string> {
  const columns = await sql<{ line: string }>`
    select format('  %I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                  case when a.attnotnull then ' not null' else '' end,
                  coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')) as line
      from pg_attribute a
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped
     order by a.attnum`.execute(db);
  const rest = await sql<{ line: string }>`
    select line from (
      select 1 as kind, conname as name,
             format('alter table %I add constraint %I %s;', ${table}::text, conname, pg_get_constraintdef(oid)) as line
        from pg_constraint where conrelid = ${table}::regclass and contype <> 'n'
      union all
      select 2, c.relname, pg_get_indexdef(i.indexrelid) || ';'
        from pg_index i join pg_class c on c.oid = i.indexrelid
       where i.indrelid = ${table}::regclass
      union all
      select 3, tgname, pg_get_triggerdef(oid) || ';'
        from pg_trigger where tgrelid = ${table}::regclass and not tgisinternal
    ) objects
    order by kind, name`.execute(db);
  const body = columns.rows.map((row) => row.line).join(",\n");
  const lines = rest.rows.map((row) => row.line);
  return [`create table ${table} (\n${body}\n);`, ...lines, ""].join("\n");
}
