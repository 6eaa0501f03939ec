import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** Moves what durable_now() returns for this database by `ms` (tests only; docs/decisions.md, "Time"). */
export async function shiftClock(db: DurableDb, ms: number): Promise<void> {
  await sql`update durable_clock set shift = shift + ${ms}::bigint * interval '1 millisecond'`.execute(db);
}
