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

/** A run's stored input (sealed, when encryption is on); undefined when there is no such run. */
export async function readRunInput(db: DurableDb, id: string): Promise<unknown> {
  const row = await db.selectFrom("durable_runs").select("input").where("id", "=", id).executeTakeFirst();
  return row === undefined ? undefined : row.input;
}

/** The id of the run a debounced start of `key` would update now (pending, never claimed), if any. */
export async function findDebouncedRun(db: DurableDb, workflow: string, key: string): Promise<string | null> {
  const row = await db
    .selectFrom("durable_runs")
    .select("id")
    .where("workflow", "=", workflow)
    .where("debounce_key", "=", key)
    .where("status", "=", "pending")
    .where("attempts", "=", 0)
    .executeTakeFirst();
  return row?.id ?? null;
}
