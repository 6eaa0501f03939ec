import type { DurableDb } from "./tables";

/** An annotation on a run's timeline: a heal, a yield, a refused write, a conflict, a cancel … */
export interface RunEvent {
  id: number;
  kind: string;
  stepId: string | null;
  fence: number | null;
  data: Record<string, unknown>;
  at: Date;
}

/** The run's events, oldest first, at most `limit` after event id `after`. */
export async function readEvents(db: DurableDb, runId: string, after: number, limit: number): Promise<RunEvent[]> {
  const rows = await db
    .selectFrom("durable_events")
    .select(["id", "kind", "step_id", "fence", "data", "created_at"])
    .where("run_id", "=", runId)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    stepId: row.step_id,
    fence: row.fence === null ? null : Number(row.fence),
    data: (row.data ?? {}) as Record<string, unknown>,
    at: new Date(row.created_at),
  }));
}
