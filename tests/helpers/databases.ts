import { sql, type Kysely } from "kysely";
import pg from "pg";

/** The real server the postgres suites use; CI creates nothing else by hand. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Drops and creates a database of its own for one test file, so files never see each other's runs. */
export async function createTestDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Empties the durable tables and puts the database clock back: a clean slate between tests. */
export async function resetDurableTables(db: Kysely<any>): Promise<void> {
  await sql`truncate durable_events, durable_signals, durable_steps, durable_runs`.execute(db);
  await sql`update durable_clock set shift = interval '0'`.execute(db);
}
