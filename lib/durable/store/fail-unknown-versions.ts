import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Fails up to `limit` due runs of the registered names whose version is not among `versions`
 * (durable_fail_unknown_versions), under a new fence; answers their ids.
 */
export async function failUnknownVersions(
  db: DurableDb,
  versions: Readonly<Record<string, readonly string[]>>,
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{ ids: string[] }>`
    select durable_fail_unknown_versions(${JSON.stringify(versions)}::jsonb, ${limit}::integer) as ids`.execute(db);
  return rows[0]?.ids ?? [];
}
