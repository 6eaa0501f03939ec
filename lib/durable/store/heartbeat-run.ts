import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Confirms the owner still holds the run (durable_heartbeat): "owned", or the run's status now
 * ("cancelled", "running" under a newer owner...), or null when the run is gone.
 */
export async function heartbeatRun(db: DurableDb, runId: string, fence: number): Promise<string | null> {
  const { rows } = await sql<{ state: string | null }>`
    select durable_heartbeat(${runId}, ${fence}::bigint) as state`.execute(db);
  return rows[0]?.state ?? null;
}
