import { sql } from "kysely";
import { type RowObject, type RunRecord, type StepRecord, toRunRecord, toStepRecord } from "./rows";
import type { DurableDb } from "./tables";

/**
 * Reads a run and its steps in one round trip, healing it first when its lease ran out
 * (durable_read_run): the dead owner is fenced off and the run is due again. `due`: a claim would
 * take the run now, by the database clock. Null: no such run.
 */
export async function readRun(
  db: DurableDb,
  id: string,
): Promise<{ run: RunRecord; steps: StepRecord[]; healed: boolean; due: boolean } | null> {
  const { rows } = await sql<{ read: RowObject | null }>`select durable_read_run(${id}) as read`.execute(db);
  const read = rows[0]?.read;
  if (!read) return null;
  return {
    run: toRunRecord(read.run),
    steps: (read.steps as RowObject[]).map(toStepRecord),
    healed: Boolean(read.healed),
    due: Boolean(read.due),
  };
}
