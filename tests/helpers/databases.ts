import { sql, type Kysely } from "kysely";
import { createServerDatabase, SERVER_URL } from "../../scripts/support/server-database";

/** The real server the postgres suites use; CI creates nothing else by hand. */
export const TEST_DATABASE_URL = SERVER_URL;

/** Drops and creates a database of its own for one test file, so files never see each other's runs. */
export const createTestDatabase = createServerDatabase;

/** Empties the durable tables and puts the database clock back: a clean slate between tests. */
export async function resetDurableTables(db: Kysely<any>): Promise<void> {
  await sql`truncate durable_stream_chunks, durable_events, durable_signals, durable_steps, durable_callbacks,
             durable_chats, durable_approval_decisions, durable_runs, durable_schedules,
             durable_app_events`.execute(db);
  await sql`update durable_clock set shift = interval '0'`.execute(db);
}
