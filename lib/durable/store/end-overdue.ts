import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Fails a run past its deadline (`deadline_exceeded`) or never claimed by its ttl (`expired`)
 * (durable_end_overdue): the fence moves on and its waiters are made due. False: it was not due to end.
 */
export async function endOverdueRun(db: DurableDb, id: string): Promise<boolean> {
  const { rows } = await sql<{ ended: boolean }>`
    select durable_end_overdue(${id}, durable_now()) as ended`.execute(db);
  return Boolean(rows[0]?.ended);
}
