// The all-tables scan of the encryption tests (docs/guide/encryption.md): every table named
// durable_% in the catalog, every column of it that can hold text (json, jsonb, text, text[],
// bytea), and each row whose column, cast to text, contains one of the markers. A table or column a
// later migration adds is scanned without a change here: the list comes from the catalog.
import { type Kysely, sql } from "kysely";

export interface PlaintextHit {
  table: string;
  column: string;
  marker: string;
  /** The start of the value that holds it, for the failure message. */
  excerpt: string;
}

const TEXT_TYPES = ["json", "jsonb", "text", "_text", "bytea", "varchar", "bpchar"];

/** The durable_% tables of the current schema and their columns that can hold a payload's text. */
export async function textColumns(db: Kysely<any>): Promise<{ table: string; column: string; type: string }[]> {
  const { rows } = await sql<{ table: string; column: string; type: string }>`
    select c.relname as table, a.attname as column, t.typname as type
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      join pg_type t on t.oid = a.atttypid
     where c.relkind in ('r', 'p') and c.relname like 'durable\\_%'
       and t.typname = any(${sql.val(TEXT_TYPES)}::text[])
     order by c.relname, a.attnum`.execute(db);
  return rows;
}

/**
 * Every (table, column, marker) where a row's value holds the marker. bytea is read through
 * encode(…, 'escape'), so an ASCII marker written as bytes is found as well as one written as text.
 */
export async function scanForPlaintext(db: Kysely<any>, markers: readonly string[]): Promise<PlaintextHit[]> {
  const hits: PlaintextHit[] = [];
  for (const { table, column, type } of await textColumns(db)) {
    const value = type === "bytea" ? sql`encode(${sql.ref(column)}, 'escape')` : sql`${sql.ref(column)}::text`;
    for (const marker of markers) {
      const { rows } = await sql<{ excerpt: string }>`
        select left(${value}, 200) as excerpt from ${sql.table(table)}
         where strpos(${value}, ${marker}) > 0 limit 1`.execute(db);
      if (rows[0]) hits.push({ table, column, marker, excerpt: rows[0].excerpt });
    }
  }
  return hits;
}
