import type { DurableDb } from "./tables";

/** The workflow and version a run belongs to, without healing or claiming it; null when there is no such run. */
export async function findRunWorkflow(
  db: DurableDb,
  id: string,
): Promise<{ workflow: string; version: string | null } | null> {
  const row = await db
    .selectFrom("durable_runs")
    .select(["workflow", "version"])
    .where("id", "=", id)
    .executeTakeFirst();
  return row ?? null;
}

/** The non-terminal run of `workflow` holding singleton key `key`, if any. */
export async function findSingletonHolder(db: DurableDb, workflow: string, key: string): Promise<string | null> {
  const row = await db
    .selectFrom("durable_runs")
    .select("id")
    .where("workflow", "=", workflow)
    .where("singleton_key", "=", key)
    .where("status", "in", ["pending", "running", "waiting"])
    .executeTakeFirst();
  return row?.id ?? null;
}
