import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Appends chunks (their JSON texts, in order) to the run's stream for one attempt of one step,
 * under the fence, in one round trip (durable_append_stream). Answers the seq of the last chunk,
 * or null when the fence moved on or the run is no longer running: nothing was written.
 */
export async function appendStream(
  db: DurableDb,
  runId: string,
  fence: number,
  chunk: { stepId: string; attempt: number; dataJson: string[] },
): Promise<number | null> {
  const { rows } = await sql<{ last: number | string | null }>`
    select durable_append_stream(${runId}, ${fence}::bigint, ${chunk.stepId}, ${chunk.attempt}::int,
                                 ${`[${chunk.dataJson.join(",")}]`}::jsonb) as last`.execute(db);
  const last = rows[0]?.last;
  return last === null || last === undefined ? null : Number(last);
}
