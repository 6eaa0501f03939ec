// Throwaway databases on the real PostgreSQL server (TEST_DATABASE_URL), for tests, the bench
// and the chaos harness. Their names start with a prefix taken from TEST_DATABASE_URL's own
// database name (or TEST_DATABASE_PREFIX), so two checkouts that point at different databases of
// one server never drop each other's: `test` makes `test_durable_racing`, `ci2` `ci2_durable_racing`.
import pg from "pg";

export const SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** PostgreSQL keeps 63 bytes of an identifier; a longer name would be cut and could collide. */
const MAX_NAME = 63;

/** The prefix of every throwaway database this checkout makes. */
export const DATABASE_PREFIX = storablePrefix(
  process.env.TEST_DATABASE_PREFIX || decodeURIComponent(new URL(SERVER_URL).pathname.slice(1)) || "test",
);

function storablePrefix(raw: string): string {
  const prefix = raw.toLowerCase().replace(/[^a-z0-9_]+/g, "_");
  if (prefix.length > 30) throw new Error(`throwaway database prefix "${prefix}" is over 30 characters`);
  return prefix;
}

/** The full name of throwaway database `name`: the checkout's prefix, then the name. */
export function throwawayName(name: string): string {
  const full = `${DATABASE_PREFIX}_${name}`;
  if (!/^[a-z0-9_]+$/.test(name) || full.length > MAX_NAME) {
    throw new Error(`throwaway database "${full}" must be [a-z0-9_] and at most ${MAX_NAME} characters`);
  }
  return full;
}

/** The URL of throwaway database `name` on the server. */
export function serverDatabaseUrl(name: string): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${throwawayName(name)}`;
  return url.toString();
}

/** Drops (forcing out its sessions) and creates throwaway database `name`; returns its URL. */
export async function createServerDatabase(name: string): Promise<string> {
  const full = throwawayName(name);
  await withAdmin(async (admin) => {
    await admin.query(`drop database if exists "${full}" with (force)`);
    await admin.query(`create database "${full}"`);
  });
  return serverDatabaseUrl(name);
}

export async function dropServerDatabases(names: Iterable<string>): Promise<void> {
  await withAdmin(async (admin) => {
    for (const name of names) await admin.query(`drop database if exists "${throwawayName(name)}" with (force)`);
  });
}

/** Runs `work` on a connection of its own to the server's admin database (TEST_DATABASE_URL's). */
export async function withAdmin(work: (admin: pg.Client) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.end();
  }
}
