import { type RawBuilder, sql } from "kysely";
import { InvalidInputError } from "../errors";
import type { RunState } from "../types";
import { type RunRecord, toRunRecord } from "./rows";
import type { DurableDb } from "./tables";

/** Which runs a list, a cancelMany or a retryMany is about (checked by the engine: engine/run-filter.ts). */
export interface RunQuery {
  /** Any of these statuses. */
  statuses?: readonly RunState[];
  workflow?: string;
  version?: string;
  /** Runs started with this tag (`durable_runs_tags`). */
  tag?: string;
  /** Only the children of this run (`ctx.step.invoke`, `ctx.step.start`). */
  parentId?: string;
  /** Runs whose metadata contains this object (jsonb `@>`, `durable_runs_metadata`). */
  metadata?: Record<string, unknown>;
  /** Created strictly after / before. */
  createdAfter?: Date;
  createdBefore?: Date;
  /**
   * Not finished, and no receipt of this step id: a patch's marker (`patch:<id>`), for the runs
   * that have not passed the patch (engine/run/patches.ts).
   */
  beforePatch?: string;
}

export interface RunFilter extends RunQuery {
  limit: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** The keyset position of a run: created_at in microseconds since the epoch, and the id. */
export type RunPosition = [micros: string, id: string];

// The cursor is the last row's (created_at in microseconds since the epoch, id): keyset
// pagination that stays exact when many runs share a millisecond, and stable while runs change
// (neither column ever changes, so a run is never on two pages and none that matched throughout
// is skipped).
const encodeCursor = ([micros, id]: RunPosition) => Buffer.from(JSON.stringify([micros, id])).toString("base64url");

function decodeCursor(cursor: string): RunPosition {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && /^\d{1,18}$/.test(value[0]) && typeof value[1] === "string")
      return [value[0], value[1]];
  } catch {}
  throw new InvalidInputError("cursor is not one this API returned");
}

/** Checks a cursor before anything is read: InvalidInputError when it is not one `list()` returned. */
export const checkCursor = (cursor: string): void => void decodeCursor(cursor);

/**
 * The conditions of a query, as SQL. A tag and a metadata filter repeat the partial indexes'
 * predicates (`tags <> '{}'`, `metadata <> '{}'`, written as literals) so the planner may take
 * them: it proves an index usable only from a predicate it finds in the query.
 */
export function runConditions(query: RunQuery, after?: RunPosition): RawBuilder<boolean>[] {
  const where: RawBuilder<boolean>[] = [];
  const { statuses } = query;
  if (statuses?.length === 1) where.push(sql`status = ${statuses[0]}`);
  else if (statuses && statuses.length > 1) where.push(sql`status in (${sql.join([...statuses])})`);
  if (query.workflow !== undefined) where.push(sql`workflow = ${query.workflow}`);
  if (query.version !== undefined) where.push(sql`version = ${query.version}`);
  if (query.tag !== undefined) where.push(sql`tags @> array[${query.tag}::text] and tags <> '{}'`);
  if (query.parentId !== undefined) where.push(sql`parent_id = ${query.parentId}`);
  if (query.metadata !== undefined && Object.keys(query.metadata).length > 0) {
    where.push(sql`metadata @> ${JSON.stringify(query.metadata)}::jsonb and metadata <> '{}'::jsonb`);
  }
  if (query.createdAfter) where.push(sql`created_at > ${query.createdAfter.toISOString()}::timestamptz`);
  if (query.createdBefore) where.push(sql`created_at < ${query.createdBefore.toISOString()}::timestamptz`);
  if (query.beforePatch !== undefined) {
    // The marker is looked up by the steps' primary key (run_id, step_id): one probe per run.
    where.push(sql`status in ('pending', 'running', 'waiting') and not exists (
      select 1 from durable_steps s where s.run_id = durable_runs.id and s.step_id = ${query.beforePatch})`);
  }
  if (after) {
    where.push(
      sql`(created_at, id) < (timestamptz 'epoch' + ${after[0]}::bigint * interval '1 microsecond', ${after[1]})`,
    );
  }
  return where;
}

/**
 * Whether a query narrows at all: a condition of its own, not only a keyset position. A bulk action
 * refuses one that does not, which would take every run (docs/guide/runs.md, "Acting on many runs").
 */
export const narrowsRuns = (query: RunQuery): boolean => runConditions(query).length > 0;

/** The conditions joined with `and` (`true` for none). */
export const whereOf = (conditions: RawBuilder<boolean>[]): RawBuilder<boolean> =>
  conditions.length === 0 ? sql<boolean>`true` : sql<boolean>`${sql.join(conditions, sql` and `)}`;

/** One page of runs, newest first, filtered as `filter` says. */
export async function listRuns(
  db: DurableDb,
  filter: RunFilter,
): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  const after = filter.cursor ? decodeCursor(filter.cursor) : undefined;
  const { rows } = await sql<Record<string, any>>`
    select *, (extract(epoch from created_at) * 1000000)::bigint::text as cursor_micros
      from durable_runs
     where ${whereOf(runConditions(filter, after))}
     order by created_at desc, id desc
     limit ${filter.limit + 1}`.execute(db);
  const page = rows.slice(0, filter.limit);
  const last = page[page.length - 1];
  return {
    // toRunRecord takes Dates as well as ISO text (new Date(date) copies it).
    runs: page.map((row) => toRunRecord(row)),
    nextCursor: rows.length > filter.limit && last ? encodeCursor([last.cursor_micros, last.id]) : null,
  };
}
