import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** Reopens a failed run (durable_retry_run): completed receipts stay, failed steps run again. */
export async function retryRun(db: DurableDb, id: string): Promise<"retried" | "not_found" | "not_failed"> {
  const { rows } = await sql<{ outcome: "retried" | "not_found" | "not_failed" }>`
    select durable_retry_run(${id}) as outcome`.execute(db);
  return rows[0]!.outcome;
}
