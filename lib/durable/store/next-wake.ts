import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Milliseconds from the database clock until the earliest wake time of a run of `workflows`
 * (negative: one is due now, perhaps held back by a concurrency limit); null when none will wake
 * by time alone. What an idle worker sleeps for.
 */
export async function msUntilNextWake(db: DurableDb, workflows: readonly string[]): Promise<number | null> {
  const { rows } = await sql<{ ms: number | string | null }>`
    select extract(epoch from (min(wake_at) - durable_now())) * 1000 as ms
      from durable_runs
     where status in ('pending', 'running', 'waiting') and wake_at < 'infinity'
       and workflow in (select jsonb_array_elements_text(${JSON.stringify(workflows)}::jsonb))`.execute(db);
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Number(ms);
}
