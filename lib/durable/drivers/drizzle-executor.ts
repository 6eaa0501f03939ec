// A Kysely handle over one Drizzle transaction: each statement Kysely compiles (its text with $n
// placeholders, and its parameters) goes to the transaction's `execute`, so the store's typed
// statements run inside a transaction Drizzle opened (lib/durable/drizzle.ts,
// docs/guide/drizzle.md). It writes no SQL of its own, and refuses to open, commit or roll back
// a transaction: Drizzle does that.
import { DrizzleQueryError, type SQL, type SQLChunk, type SQLWrapper, sql } from "drizzle-orm";
import type { CompiledQuery, DatabaseConnection, Kysely, QueryResult } from "kysely";
import { kyselyInTransaction, refuseStream } from "./kysely-in-transaction";

/** What the store needs of a Drizzle transaction (node-postgres, Neon serverless, PGlite). */
export interface DrizzleExecutor {
  execute(query: SQLWrapper): PromiseLike<unknown>;
}

/** A Kysely handle whose every statement runs on `tx`. Made per transaction; nothing to close. */
export function kyselyOverDrizzle<DB>(tx: DrizzleExecutor): Kysely<DB> {
  return kyselyInTransaction<DB>(new DrizzleConnection(tx), "Drizzle");
}

// Placeholders outside quoted literals and identifiers: Kysely numbers them $1, $2, ... in order.
const PLACEHOLDER = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g;

/** Kysely's compiled statement as a Drizzle `sql` object: the same text, each $n a bound parameter. */
export function toDrizzleSql(query: Pick<CompiledQuery, "sql" | "parameters">): SQL {
  const chunks: SQLChunk[] = [];
  let last = 0;
  for (const match of query.sql.matchAll(PLACEHOLDER)) {
    if (match[1] === undefined) continue;
    const n = Number(match[1]);
    if (n < 1 || n > query.parameters.length) {
      throw new Error(`statement has placeholder $${n} but ${query.parameters.length} parameter(s)`);
    }
    chunks.push(sql.raw(query.sql.slice(last, match.index)), sql.param(query.parameters[n - 1]));
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(query.sql.slice(last)));
  return sql.join(chunks);
}

type DriverResult = { rows?: unknown[]; rowCount?: number | null; affectedRows?: number; command?: string };
const DML = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

class DrizzleConnection implements DatabaseConnection {
  constructor(readonly tx: DrizzleExecutor) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let result: DriverResult;
    try {
      // node-postgres and Neon answer pg's QueryResult, PGlite its Results: both carry `rows`.
      result = ((await this.tx.execute(toDrizzleSql(query))) ?? {}) as DriverResult;
    } catch (error) {
      // Drizzle wraps the driver's error ("Failed query: ..."): the store sees the driver's own,
      // with its SQLSTATE, as it does on every other handle.
      throw error instanceof DrizzleQueryError && error.cause instanceof Error ? error.cause : error;
    }
    const affected =
      typeof result.affectedRows === "number"
        ? result.affectedRows
        : result.command !== undefined && DML.has(result.command)
          ? (result.rowCount ?? 0)
          : undefined;
    return {
      rows: (result.rows ?? []) as R[],
      numAffectedRows: affected === undefined ? undefined : BigInt(affected),
    };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    return refuseStream("Drizzle");
  }
}
