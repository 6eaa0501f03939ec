import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** An event as stored: its data sealed when encryption is on. */
export interface StoredAppEvent {
  id: string;
  data: unknown;
}

/**
 * The events of `name` stored at or after `since` (a timestamptz's text, to the microsecond) and
 * before `until` (none: no end), oldest first
 * (created_at, then id): what a replayed waitForEvent looks through (durable_app_events_by_name).
 */
export async function readAppEvents(
  db: DurableDb,
  name: string,
  since: string,
  until: Date | null,
): Promise<StoredAppEvent[]> {
  const from = since;
  const to = until?.toISOString() ?? null;
  const { rows } = await sql<StoredAppEvent>`
    select id, data from durable_app_events
     where name = ${name} and created_at >= ${from}::timestamptz
       and (${to}::timestamptz is null or created_at < ${to}::timestamptz)
     order by created_at, id`.execute(db);
  return rows;
}
