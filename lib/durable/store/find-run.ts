import type { DurableDb } from "./tables";

/** The workflow a run belongs to, without healing or claiming it; null when there is no such run. */
export async function findRunWorkflow(db: DurableDb, id: string): Promise<string | null> {
  const row = await db.selectFrom("durable_runs").select("workflow").where("id", "=", id).executeTakeFirst();
  return row?.workflow ?? null;
}
