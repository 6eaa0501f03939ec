// Where the bench runs: the real server (TEST_DATABASE_URL) in throwaway `<prefix>_durable_bench_*`
// databases, or in-memory PGlite.
import type { Kysely } from "kysely";
import { connect } from "../../lib/durable";
import { createServerDatabase, dropServerDatabases, SERVER_URL, serverDatabaseUrl } from "../support/server-database";

export { SERVER_URL };

export type Target = "pglite" | "postgres";

const created = new Set<string>();

/** Drops and creates throwaway database `durable_bench_<suffix>` on the server; returns its URL. */
export async function freshServerDatabase(suffix: string): Promise<string> {
  const name = `durable_bench_${suffix}`;
  created.add(name);
  return createServerDatabase(name);
}

export const urlOf = serverDatabaseUrl;

/** Drops every database this process created (the bench leaves nothing behind). */
export async function dropCreatedDatabases(): Promise<void> {
  await dropServerDatabases(created);
  created.clear();
}

/** A Kysely handle on a fresh database of `target`. */
export async function open(
  target: Target,
  suffix: string,
  options: { onQuery?: (sql: string) => void; poolSize?: number } = {},
): Promise<Kysely<any>> {
  if (target === "pglite") return connect("memory://", { onQuery: options.onQuery });
  return connect(await freshServerDatabase(suffix), { driver: "pg", ...options });
}
