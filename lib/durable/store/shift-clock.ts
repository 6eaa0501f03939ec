import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Moves what durable_now() returns for this database by `ms` (tests only; docs/decisions.md,
 * "Time"), unless that would take it past `latest` (docs/rules.md, rule 19): then nothing moves
 * and the answer is false.
 */
export async function shiftClock(db: DurableDb, ms: number, latest: Date): Promise<boolean> {
  const { rows } = await sql<{ moved: number }>`
    update durable_clock set shift = shift + ${ms}::bigint * interval '1 millisecond'
     where durable_now() + ${ms}::bigint * interval '1 millisecond' <= ${latest.toISOString()}::timestamptz
    returning 1 as moved`.execute(db);
  return rows.length > 0;
}
