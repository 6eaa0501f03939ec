import { sql } from "kysely";
import type { DurableDb } from "./tables";

export interface InsertedRun {
  /** The workflow the id is stored under. */
  workflow: string;
  /** This call created the run. */
  created: boolean;
  /** The stored input equals this call's input (jsonb equality: key order does not matter). */
  sameInput: boolean;
}

/**
 * Inserts a run if no run has this id (the caller's dedup key, forever), due now on the database
 * clock. Answers the workflow the id is stored under, whether this call created it, and whether
 * an existing run was started with the same input.
 */
export async function insertRun(
  db: DurableDb,
  run: { id: string; workflow: string; inputJson: string },
): Promise<InsertedRun> {
  const { rows } = await sql<InsertedRun>`
    with inserted as (
      insert into durable_runs (id, workflow, input, wake_at)
      values (${run.id}, ${run.workflow}, ${run.inputJson}::jsonb, durable_now())
      on conflict (id) do nothing
      returning workflow
    )
    select workflow, true as created, true as "sameInput" from inserted
    union all
    select workflow, false as created, input = ${run.inputJson}::jsonb as "sameInput" from durable_runs
     where id = ${run.id} and not exists (select 1 from inserted)`.execute(db);
  const row = rows[0];
  if (row) return row;
  // A concurrent start of the same id committed after this statement's snapshot: read it now.
  const existing = await db
    .selectFrom("durable_runs")
    .select(["workflow", sql<boolean>`input = ${run.inputJson}::jsonb`.as("sameInput")])
    .where("id", "=", run.id)
    .executeTakeFirstOrThrow();
  return { ...existing, created: false };
}
