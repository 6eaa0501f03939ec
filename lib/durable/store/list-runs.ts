import { sql } from "kysely";
import { InvalidInputError } from "../errors";
import type { RunState } from "../types";
import { type RunRecord, toRunRecord } from "./rows";
import type { DurableDb } from "./tables";

export interface RunFilter {
  status?: RunState;
  workflow?: string;
  /** Only the children of this run (`ctx.step.invoke`, `ctx.step.start`). */
  parentId?: string;
  limit: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

// The cursor is the last row's (created_at in microseconds since the epoch, id): keyset
// pagination that stays exact when many runs share a millisecond.
const encodeCursor = (micros: string, id: string) => Buffer.from(JSON.stringify([micros, id])).toString("base64url");

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && /^\d+$/.test(value[0]) && typeof value[1] === "string") return [value[0], value[1]];
  } catch {}
  throw new InvalidInputError("cursor is not one this API returned");
}

/** One page of runs, newest first, optionally filtered by status, workflow and parent. */
export async function listRuns(
  db: DurableDb,
  filter: RunFilter,
): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  let query = db
    .selectFrom("durable_runs")
    .selectAll()
    .select(sql<string>`(extract(epoch from created_at) * 1000000)::bigint::text`.as("cursor_micros"))
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(filter.limit + 1);
  if (filter.status) query = query.where("status", "=", filter.status);
  if (filter.workflow) query = query.where("workflow", "=", filter.workflow);
  if (filter.parentId !== undefined) query = query.where("parent_id", "=", filter.parentId);
  if (filter.cursor) {
    const [micros, id] = decodeCursor(filter.cursor);
    query = query.where(
      sql<boolean>`(created_at, id) < (timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond', ${id})`,
    );
  }
  const rows = await query.execute();
  const page = rows.slice(0, filter.limit);
  const last = page[page.length - 1];
  return {
    // toRunRecord takes Dates as well as ISO text (new Date(date) copies it).
    runs: page.map((row) => toRunRecord(row)),
    nextCursor: rows.length > filter.limit && last ? encodeCursor(last.cursor_micros, last.id) : null,
  };
}
