// Throwaway databases on the real PostgreSQL server (TEST_DATABASE_URL), for tests, the bench
// and the chaos harness.
import pg from "pg";

export const SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The URL of database `name` on the server. */
export function serverDatabaseUrl(name: string): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops (forcing out its sessions) and creates database `name`; returns its URL. */
export async function createServerDatabase(name: string): Promise<string> {
  await withAdmin(async (admin) => {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.query(`create database "${name}"`);
  });
  return serverDatabaseUrl(name);
}

export async function dropServerDatabases(names: Iterable<string>): Promise<void> {
  await withAdmin(async (admin) => {
    for (const name of names) await admin.query(`drop database if exists "${name}" with (force)`);
  });
}

async function withAdmin(work: (admin: pg.Client) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.end();
  }
}
