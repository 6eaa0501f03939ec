import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Inserts a run if no run has this id (the caller's dedup key, forever), due now on the database
 * clock. Answers the workflow the id is stored under and whether this call created it.
 */
export async function insertRun(
  db: DurableDb,
  run: { id: string; workflow: string; inputJson: string },
): Promise<{ workflow: string; created: boolean }> {
  const { rows } = await sql<{ workflow: string; created: boolean }>`
    with inserted as (
      insert into durable_runs (id, workflow, input, wake_at)
      values (${run.id}, ${run.workflow}, ${run.inputJson}::jsonb, durable_now())
      on conflict (id) do nothing
      returning workflow
    )
    select workflow, true as created from inserted
    union all
    select workflow, false as created from durable_runs
     where id = ${run.id} and not exists (select 1 from inserted)`.execute(db);
  const row = rows[0];
  if (row) return row;
  // A concurrent start of the same id committed after this statement's snapshot: read it now.
  const existing = await db
    .selectFrom("durable_runs")
    .select("workflow")
    .where("id", "=", run.id)
    .executeTakeFirstOrThrow();
  return { workflow: existing.workflow, created: false };
}
