import { sql, type Kysely } from "kysely";
import type { DurableTables } from "../../db/schema";
import { InvalidInputError } from "./errors";
import { toRunRecord } from "./rows";
import { toRunSummary } from "./run-status";
import { runStatusValues, type RunStatusValue, type RunSummary } from "./schemas";

export interface ListOptions {
  status?: RunStatusValue;
  workflow?: string;
  /** 1–200, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface ListPage {
  runs: RunSummary[];
  nextCursor: string | null;
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

/** Newest first, optionally filtered by status and workflow. */
export async function listRuns(db: Kysely<any>, options: ListOptions = {}, isRegistered: (workflow: string) => boolean = () => true): Promise<ListPage> {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new InvalidInputError("limit is an integer from 1 to 200");
  if (options.status !== undefined && !runStatusValues.safeParse(options.status).success) {
    throw new InvalidInputError(`status is one of ${runStatusValues.options.join(", ")}`);
  }
  const typed = db as Kysely<DurableTables>;
  let query = typed
    .selectFrom("durable_runs")
    .selectAll()
    .select(sql<string>`(extract(epoch from created_at) * 1000000)::bigint::text`.as("cursor_micros"))
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1);
  if (options.status) query = query.where("status", "=", options.status);
  if (options.workflow) query = query.where("workflow", "=", options.workflow);
  if (options.cursor) {
    const [micros, id] = decodeCursor(options.cursor);
    query = query.where(sql<boolean>`(created_at, id) < (timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond', ${id})`);
  }
  const rows = (await query.execute()) as Record<string, any>[];
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  // toRunRecord takes Dates as well as ISO text (new Date(date) copies it).
  const runs = page.map((row) => toRunSummary(toRunRecord(row), isRegistered(row.workflow)));
  return { runs, nextCursor: rows.length > limit && last ? encodeCursor(last.cursor_micros, last.id) : null };
}
