import { sql, type Kysely } from "kysely";
import type { RunStatus } from "@/lib/durable";

export type RunCounts = Record<RunStatus["status"], number> & { all: number };

/**
 * Runs per status, for the filter tabs. A count over the whole table: fine for a dashboard; with
 * millions of finished runs, count the unfinished ones only (the claim's partial index serves them).
 */
export async function countRuns(db: Kysely<any>): Promise<RunCounts> {
  const { rows } = await sql<{ status: RunStatus["status"]; n: number }>`
    select status, count(*)::int as n from durable_runs group by status`.execute(db);
  const counts: RunCounts = { all: 0, pending: 0, running: 0, waiting: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const row of rows) {
    counts[row.status] = row.n;
    counts.all += row.n;
  }
  return counts;
}
