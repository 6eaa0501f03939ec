import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** How many runs of `workflows` a claim would take now, counted up to `cap` (durable_count_due). */
export async function countDueRuns(db: DurableDb, workflows: readonly string[], cap: number): Promise<number> {
  const { rows } = await sql<{ due: number }>`
    select durable_count_due(${JSON.stringify(workflows)}::jsonb, ${cap}::integer) as due`.execute(db);
  return Number(rows[0]!.due);
}
