import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Makes due again, up to `cap`, the runs a rate limit held under another limit than the one each
 * workflow registers now, or under one it no longer has (durable_release_rate_holds; docs/sql.md,
 * "Flow control"). Answers how many it released.
 */
export async function releaseRateHolds(
  db: DurableDb,
  workflows: readonly string[],
  rates: Readonly<Record<string, { limit: number; periodMs: number }>>,
  cap: number,
): Promise<number> {
  const { rows } = await sql<{ released: number }>`
    select durable_release_rate_holds(${JSON.stringify(workflows)}::jsonb, ${JSON.stringify(rates)}::jsonb,
                                      ${cap}::integer) as released`.execute(db);
  return Number(rows[0]?.released ?? 0);
}
