import type { DurableDb } from "./tables";

/** A callback of a run as the dashboard lists it: its id (the token is derived from it), step, deadline, delivery. */
export interface RunCallbackRecord {
  id: string;
  stepId: string;
  deadlineAt: Date | null;
  deliveredAt: Date | null;
}

/**
 * The callbacks a run made (`ctx.step.callback`), oldest first, at most `limit`: one range of the
 * durable_callbacks_run index. The payload and its schema stay in the row; only the operator's page
 * asks for this (docs/guide/dashboard.md, "Composition on the run page").
 */
export async function listCallbacks(db: DurableDb, runId: string, limit: number): Promise<RunCallbackRecord[]> {
  const rows = await db
    .selectFrom("durable_callbacks")
    .select(["id", "step_id", "deadline_at", "delivered_at"])
    .where("run_id", "=", runId)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    stepId: row.step_id,
    deadlineAt: row.deadline_at ? new Date(row.deadline_at) : null,
    deliveredAt: row.delivered_at ? new Date(row.delivered_at) : null,
  }));
}
