import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Gives the run back, due now (durable_release_run): the budget cannot fit the next step, or the
 * last step had another outcome recorded first. `stepId` is noted on the yield event.
 * False: the claim was lost and nothing was written.
 */
export async function releaseRun(db: DurableDb, runId: string, fence: number, stepId: string | null): Promise<boolean> {
  const { rows } = await sql<{ released: boolean }>`
    select durable_release_run(${runId}, ${fence}::bigint, ${stepId}) as released`.execute(db);
  return rows[0]!.released;
}
