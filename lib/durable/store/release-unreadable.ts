import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Gives back a claimed run whose payloads no key of this deployment opens
 * (durable_release_unreadable): pending, due `wakeInMs` later, nothing of its own written but a
 * 'decryption.failed' event naming `keyId`. False: the claim was lost and nothing was written.
 */
export async function releaseUnreadable(
  db: DurableDb,
  runId: string,
  fence: number,
  keyId: string,
  wakeInMs: number,
): Promise<boolean> {
  const { rows } = await sql<{ released: boolean }>`
    select durable_release_unreadable(${runId}, ${fence}::bigint, ${keyId},
                                      ${Math.max(0, Math.round(wakeInMs))}::bigint) as released`.execute(db);
  return rows[0]!.released;
}
