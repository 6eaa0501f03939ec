import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Confirms the owner still holds the run and its lease (durable_heartbeat): "owned"; "expired"
 * when the lease ran out (nobody healed the run yet); the run's status now when another owner,
 * a heal or a cancel moved the fence on ("cancelled", "pending"...); null when the run is gone.
 */
export async function heartbeatRun(db: DurableDb, runId: string, fence: number): Promise<string | null> {
  const { rows } = await sql<{ state: string | null }>`
    select durable_heartbeat(${runId}, ${fence}::bigint) as state`.execute(db);
  return rows[0]?.state ?? null;
}
