import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** The earliest time a run may next be claimed, by the database clock. */
export interface NextWake {
  /** The earliest wake time of an unfinished run (a running run's is the end of its lease). */
  at: Date;
  /** Milliseconds from the database clock now until `at` (0 or less: one is due now). */
  inMs: number;
}

/**
 * The earliest wake time of a run of `workflows` and how far off it is by the database clock
 * (negative: one is due now, perhaps held back by a concurrency limit); null when none will wake
 * by time alone. What an idle worker sleeps for, and what a tick reports (`nextWakeAt`).
 */
export async function readNextWake(db: DurableDb, workflows: readonly string[]): Promise<NextWake | null> {
  const { rows } = await sql<{ at: Date | string | null; ms: number | string | null }>`
    /* planned once */
    select min(wake_at) as at, extract(epoch from (min(wake_at) - durable_now())) * 1000 as ms
      from durable_runs
     where status in ('pending', 'running', 'waiting') and wake_at < 'infinity'
       and workflow in (select jsonb_array_elements_text(${JSON.stringify(workflows)}::jsonb))`.execute(db);
  const row = rows[0];
  if (!row || row.at === null || row.ms === null) return null;
  return { at: new Date(row.at), inMs: Number(row.ms) };
}

/** Milliseconds until the next wake (see `readNextWake`); null when none will wake by time alone. */
export async function msUntilNextWake(db: DurableDb, workflows: readonly string[]): Promise<number | null> {
  return (await readNextWake(db, workflows))?.inMs ?? null;
}
