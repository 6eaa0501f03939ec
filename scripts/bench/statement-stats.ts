// Server time per statement from pg_stat_statements, for one measured stretch on one database (the
// peers section's 1-loop drains of ours, docs/performance.md "Peers"). Only when the server loads
// the module (shared_preload_libraries): the bench never changes the server's configuration. The
// extension's view is created in the throwaway database measured, if it is not there yet.
// Statements are read per database and diffed from a snapshot, so nothing is reset.
import pg from "pg";
import { statementKind } from "./throughput";

/** Per statement kind (statementKind): calls, and ms the server spent executing them. */
export type ServerStatements = Map<string, { calls: number; ms: number }>;

export interface StatementStats {
  /** Stops the measurement: what ran on the database since the start, by kind. */
  stop(): Promise<ServerStatements>;
}

const READ = `select queryid::text || ':' || toplevel::text as id, query, calls::float8 as calls,
                     total_exec_time as ms
                from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`;

type Snapshot = Map<string, { query: string; calls: number; ms: number }>;

async function snapshot(client: pg.Client): Promise<Snapshot> {
  const { rows } = await client.query(READ);
  return new Map(rows.map((r) => [r.id as string, { query: r.query, calls: r.calls, ms: r.ms }]));
}

/** Why the statements cannot be read on `url`'s server, or null when they can. */
export async function statementStatsUnavailable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query("select current_setting('shared_preload_libraries') as libraries");
    if (!/\bpg_stat_statements\b/.test(rows[0].libraries)) return "pg_stat_statements is not loaded by the server";
    const available = await client.query("select 1 from pg_available_extensions where name = 'pg_stat_statements'");
    return available.rowCount ? null : "the pg_stat_statements extension is not installed on the server";
  } finally {
    await client.end();
  }
}

/** Starts measuring the statements of `url`'s database (null: unavailable, see statementStatsUnavailable). */
export async function measureStatements(url: string): Promise<StatementStats | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("create extension if not exists pg_stat_statements");
  } catch {
    await client.end();
    return null;
  }
  const before = await snapshot(client);
  return {
    async stop() {
      const after = await snapshot(client);
      await client.end();
      const byKind: ServerStatements = new Map();
      for (const [id, { query, calls, ms }] of after) {
        if (/pg_stat_statements|pg_stat_activity/.test(query)) continue; // the bench's own reads
        const was = before.get(id);
        const entry = byKind.get(statementKind(query)) ?? { calls: 0, ms: 0 };
        entry.calls += calls - (was?.calls ?? 0);
        entry.ms += ms - (was?.ms ?? 0);
        if (entry.calls > 0) byKind.set(statementKind(query), entry);
      }
      return byKind;
    },
  };
}
