import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * How many runs of `workflows` (of the registered `versions`) a claim would take now, counted up
 * to `cap` (durable_count_due).
 */
export async function countDueRuns(
  db: DurableDb,
  workflows: readonly string[],
  versions: Readonly<Record<string, readonly string[]>>,
  cap: number,
): Promise<number> {
  const { rows } = await sql<{ due: number }>`
    select durable_count_due(${JSON.stringify(workflows)}::jsonb, ${cap}::integer,
                             ${JSON.stringify(versions)}::jsonb) as due`.execute(db);
  return Number(rows[0]!.due);
}
