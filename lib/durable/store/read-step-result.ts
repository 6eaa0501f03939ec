import type { DurableDb } from "./tables";

/** One step's stored result: for a step whose result the claim left out (over the inline limit). */
export async function readStepResult(db: DurableDb, runId: string, stepId: string): Promise<unknown> {
  const row = await db
    .selectFrom("durable_steps")
    .select("result")
    .where("run_id", "=", runId)
    .where("step_id", "=", stepId)
    .executeTakeFirst();
  return row?.result ?? null;
}
