import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * The ids of a run's descendants that have not ended (its children by `ctx.step.invoke` and
 * `ctx.step.start`, theirs, and so on, through runs that have not ended), deepest first
 * (durable_open_descendants): what the test harness drives along with the run.
 */
export async function listOpenDescendants(db: DurableDb, runId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from durable_open_descendants(${runId}) order by depth desc, id`.execute(db);
  return rows.map((row) => row.id);
}
