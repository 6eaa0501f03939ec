import { sql, type Kysely } from "kysely";
import type { RunStatus } from "@/lib/durable";

export type RunCounts = Record<RunStatus["status"], number> & { all: number };

/** Counted exactly up to this many runs per status; past it the tab says "10,000+". */
export const COUNT_CAP = 10_000;

const STATUSES = ["pending", "running", "waiting", "completed", "failed", "cancelled"] as const;

/**
 * Runs per status, for the filter tabs. Each status is counted up to COUNT_CAP + 1 rows of the
 * (status, created_at, id) index, never over the whole table: with millions of finished runs the
 * page costs the same. A count over the cap means "more than COUNT_CAP"; `all` is their sum.
 */
export async function countRuns(db: Kysely<any>): Promise<RunCounts> {
  const { rows } = await sql<{ status: RunStatus["status"]; n: number }>`
    select s.status,
           (select count(*)::int from (select 1 from durable_runs r where r.status = s.status
                                        limit ${COUNT_CAP + 1}) capped) as n
      from unnest(${sql.val([...STATUSES])}::text[]) s(status)`.execute(db);
  const counts: RunCounts = { all: 0, pending: 0, running: 0, waiting: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const row of rows) {
    counts[row.status] = row.n;
    counts.all += row.n;
  }
  return counts;
}

/** A tab's count as shown: exact up to the cap ("1", "9873"), else "10,000+". */
export function countLabel(counts: RunCounts, filter: keyof RunCounts): string {
  const capped = filter === "all" ? STATUSES.some((s) => counts[s] > COUNT_CAP) : counts[filter] > COUNT_CAP;
  return capped ? `${COUNT_CAP.toLocaleString("en-US")}+` : String(counts[filter]);
}
