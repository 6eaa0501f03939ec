import { sql } from "kysely";
import type { RowObject } from "./rows";
import type { DurableDb } from "./tables";

/** One chunk of a run's stream; `broken`: its attempt did not complete, so a reader drops it. */
export interface StreamChunk {
  seq: number;
  stepId: string;
  attempt: number;
  data: unknown;
  broken: boolean;
}

/**
 * The run's stream chunks after seq `after`, oldest first, at most `limit`, and the run's status
 * (null when there is no such run), in one round trip (durable_read_stream).
 */
export async function readStream(
  db: DurableDb,
  runId: string,
  after: number,
  limit: number,
): Promise<{ status: string | null; chunks: StreamChunk[] }> {
  const { rows } = await sql<{ stream: RowObject }>`
    select durable_read_stream(${runId}, ${after}::bigint, ${limit}::int) as stream`.execute(db);
  const stream = rows[0]!.stream;
  return {
    status: stream.status ?? null,
    chunks: (stream.chunks as RowObject[]).map((c) => ({
      seq: Number(c.seq),
      stepId: c.step_id,
      attempt: Number(c.attempt),
      data: c.data,
      broken: c.broken === true,
    })),
  };
}
