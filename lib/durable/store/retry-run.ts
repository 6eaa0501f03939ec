import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Reopens a failed run (durable_retry_run): completed receipts stay, failed steps run again.
 * `singleton_held`: the run is a singleton and another run of its key is active; `compacted`:
 * retention deleted its receipts. Either way nothing changed.
 */
export async function retryRun(
  db: DurableDb,
  id: string,
): Promise<"retried" | "not_found" | "not_failed" | "singleton_held" | "compacted"> {
  try {
    const { rows } = await sql<{ outcome: "retried" | "not_found" | "not_failed" | "compacted" }>`
      select durable_retry_run(${id}) as outcome`.execute(db);
    return rows[0]!.outcome;
  } catch (error) {
    // The reopened run would be a second non-terminal run of its singleton key (durable_runs_singleton).
    if ((error as { code?: string })?.code === "23505" && String(error).includes("durable_runs_singleton")) {
      return "singleton_held";
    }
    throw error;
  }
}
