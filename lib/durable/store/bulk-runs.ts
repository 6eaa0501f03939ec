import { sql } from "kysely";
import { InvalidInputError } from "../errors";
import { narrowsRuns, type RunPosition, type RunQuery, runConditions, whereOf } from "./list-runs";
import type { DurableDb } from "./tables";

/** What one batch of cancelMany or retryMany did, and where the next one starts. */
export interface BulkBatch {
  /** Runs the batch picked: they matched, and were not terminal (cancel) or were failed (retry). */
  matched: number;
  /** Runs it changed; the others finished (cancel) or were retried or compacted (retry) meanwhile. */
  changed: number;
  /** The oldest run picked: the next batch takes runs older than it. Null: none picked. */
  last: RunPosition | null;
}

/**
 * One batch of cancelMany (docs/sql.md, "Bulk actions"): picks up to `limit` runs that match and
 * are not terminal, newest first, older than `after`, and cancels each by durable_cancel_run's
 * rules (durable_cancel_runs), in one statement and transaction.
 */
export async function cancelRunsBatch(
  db: DurableDb,
  query: RunQuery,
  options: { after?: RunPosition; limit: number; reason: string | null; children: "cancel" | "keep" },
): Promise<BulkBatch> {
  const pick = pickOf(query, ["pending", "running", "waiting"]);
  return runBatch(db, pick, options, (ids) => sql`durable_cancel_runs(${ids}, ${options.reason}, ${options.children})`);
}

/** One batch of retryMany: as cancelRunsBatch, over failed runs, each by durable_retry_run's rules. */
export async function retryRunsBatch(
  db: DurableDb,
  query: RunQuery,
  options: { after?: RunPosition; limit: number },
): Promise<BulkBatch> {
  const pick = pickOf(query, ["failed"]);
  return runBatch(db, pick, options, (ids) => sql`durable_retry_runs(${ids})`);
}

type State = NonNullable<RunQuery["statuses"]>[number];

/**
 * What a batch picks: the query, within the statuses the action applies to (none of those the
 * filter names: nothing matches). A query that narrows nothing is refused here too, whoever calls:
 * the statuses added here would hide that it takes every run of them (docs/sql.md, "Bulk actions").
 */
function pickOf(query: RunQuery, applicable: State[]): RunQuery {
  if (!narrowsRuns(query)) throw new InvalidInputError("a bulk action's filter names nothing: it would take every run");
  const given = query.statuses;
  return {
    ...query,
    statuses: given === undefined ? applicable : applicable.filter((status) => given.includes(status)),
  };
}

async function runBatch(
  db: DurableDb,
  query: RunQuery,
  options: { after?: RunPosition; limit: number },
  apply: (ids: ReturnType<typeof sql>) => ReturnType<typeof sql>,
): Promise<BulkBatch> {
  if (query.statuses?.length === 0) return { matched: 0, changed: 0, last: null };
  const ids = sql`array(select id from picked order by created_at desc, id desc)`;
  const { rows } = await sql<{ matched: number; changed: number; last_micros: string | null; last_id: string | null }>`
    with picked as materialized (
      select id, created_at from durable_runs
       where ${whereOf(runConditions(query, options.after))}
       order by created_at desc, id desc
       limit ${options.limit}
    ), oldest as (
      select (extract(epoch from created_at) * 1000000)::bigint::text as micros, id
        from picked order by created_at, id limit 1
    )
    select (select count(*) from picked)::int as matched, ${apply(ids)} as changed,
           (select micros from oldest) as last_micros, (select id from oldest) as last_id`.execute(db);
  const row = rows[0]!;
  return {
    matched: Number(row.matched),
    changed: Number(row.changed),
    last: row.last_micros !== null && row.last_id !== null ? [row.last_micros, row.last_id] : null,
  };
}
