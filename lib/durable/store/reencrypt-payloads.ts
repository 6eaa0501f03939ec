import { sql } from "kysely";
import { type RunPosition, type RunQuery, runConditions, whereOf } from "./list-runs";
import type { DurableDb, Executor } from "./tables";

/**
 * A jsonb column that holds payloads (docs/guide/encryption.md, "What is stored"), as
 * `durable.reencrypt` rewrites it: `value` columns hold one value (sealed whole), `fields` columns
 * an object whose named text fields are sealed (an error's message, an event's reason).
 * A table that stores payloads adds its columns to PAYLOAD_COLUMNS.
 */
export interface PayloadColumn {
  table: string;
  column: string;
  /** The row's primary key columns, and the column naming the run it belongs to. */
  key: readonly string[];
  runIdColumn: string;
  kind: "value" | "error" | "fields";
  /** For `fields`: the top-level fields that hold text. */
  fields?: readonly string[];
}

export const PAYLOAD_COLUMNS: PayloadColumn[] = [
  { table: "durable_runs", column: "input", key: ["id"], runIdColumn: "id", kind: "value" },
  { table: "durable_runs", column: "output", key: ["id"], runIdColumn: "id", kind: "value" },
  { table: "durable_runs", column: "error", key: ["id"], runIdColumn: "id", kind: "error" },
  { table: "durable_steps", column: "result", key: ["run_id", "step_id"], runIdColumn: "run_id", kind: "value" },
  { table: "durable_steps", column: "error", key: ["run_id", "step_id"], runIdColumn: "run_id", kind: "error" },
  { table: "durable_signals", column: "payload", key: ["seq"], runIdColumn: "run_id", kind: "value" },
  { table: "durable_callbacks", column: "payload", key: ["id"], runIdColumn: "run_id", kind: "value" },
  // Each chunk sealed on its own (engine/run/run-streams.ts); a chunk is never updated but here.
  { table: "durable_stream_chunks", column: "data", key: ["run_id", "seq"], runIdColumn: "run_id", kind: "value" },
  // A person's reason for an approval decision (docs/guide/approvals.md), sealed whole.
  {
    table: "durable_approval_decisions",
    column: "reason",
    key: ["run_id", "step_id", "actor"],
    runIdColumn: "run_id",
    kind: "value",
  },
  {
    table: "durable_events",
    column: "data",
    key: ["id"],
    runIdColumn: "run_id",
    kind: "fields",
    fields: ["reason"],
  },
];

/** One stored payload: where it is (its column and row key), its run, and its value. */
export interface StoredPayload {
  column: PayloadColumn;
  key: unknown[];
  runId: string;
  value: unknown;
}

/**
 * Locks the next batch of runs a reencrypt walks (newest first, older than `after`), FOR UPDATE:
 * an owner's receipt, a delivery or a cancel of one of them waits until the batch commits, so
 * nothing written after the batch read a value is overwritten by it (docs/sql.md, "Lock order":
 * the run's row first, as every writer takes it).
 */
export async function lockRunBatch(
  tx: Executor,
  query: RunQuery,
  after: RunPosition | undefined,
  limit: number,
): Promise<{ ids: string[]; last: RunPosition | null }> {
  const { rows } = await sql<{ id: string; micros: string }>`
    select id, (extract(epoch from created_at) * 1000000)::bigint::text as micros
      from durable_runs
     where ${whereOf(runConditions(query, after))}
     order by created_at desc, id desc
     limit ${limit}
       for update`.execute(tx);
  const last = rows[rows.length - 1];
  return { ids: rows.map((row) => row.id), last: last ? [last.micros, last.id] : null };
}

/** The non-null payloads of these runs in `column`, their rows locked FOR UPDATE. */
export async function readPayloads(tx: Executor, column: PayloadColumn, runIds: string[]): Promise<StoredPayload[]> {
  if (runIds.length === 0) return [];
  const keys = column.key.map((name, n) => sql`${sql.ref(name)} as ${sql.ref(`k${n}`)}`);
  const { rows } = await sql<Record<string, unknown>>`
    select ${sql.join(keys)}, ${sql.ref(column.runIdColumn)} as run_id, ${sql.ref(column.column)} as value
      from ${sql.table(column.table)}
     where ${sql.ref(column.runIdColumn)} = any(${runIds}::text[]) and ${sql.ref(column.column)} is not null
       for update`.execute(tx);
  return rows.map((row) => ({
    column,
    key: column.key.map((_, n) => row[`k${n}`]),
    runId: row.run_id as string,
    value: row.value,
  }));
}

/** Writes a payload's new JSON text in place of the value it held (the row is locked by the batch). */
export async function writePayload(tx: Executor, payload: StoredPayload, json: string): Promise<void> {
  const where = payload.column.key.map((name, n) => sql`${sql.ref(name)} = ${payload.key[n]}`);
  await sql`
    update ${sql.table(payload.column.table)} set ${sql.ref(payload.column.column)} = ${json}::jsonb
     where ${sql.join(where, sql` and `)}`.execute(tx);
}

/** Runs `work` in one transaction of the store's database. */
export function inTransaction<T>(db: DurableDb, work: (tx: Executor) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
