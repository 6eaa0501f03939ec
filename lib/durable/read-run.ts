import { sql, type Kysely } from "kysely";
import { toRunRecord, toStepRecord, type RunRecord, type StepRecord } from "./rows";

/**
 * Reads a run and its steps in one round trip, healing it first when its lease ran out
 * (durable_read_run): the dead owner is fenced off and the run is due again. Null: no such run.
 */
export async function readRun(db: Kysely<any>, id: string): Promise<{ run: RunRecord; steps: StepRecord[]; healed: boolean } | null> {
  const { rows } = await sql<{ read: Record<string, any> | null }>`select durable_read_run(${id}) as read`.execute(db);
  const read = rows[0]?.read;
  if (!read) return null;
  return {
    run: toRunRecord(read.run),
    steps: (read.steps as Record<string, any>[]).map(toStepRecord),
    healed: Boolean(read.healed),
  };
}
