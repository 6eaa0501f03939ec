// A Kysely dialect over one PGlite instance. PGlite has a single session, so the driver hands
// out exactly one connection behind a FIFO mutex held from acquire to release: two concurrent
// `db.transaction()`s then run one after the other instead of interleaving their statements
// (interleaving lets one transaction's rollback wipe the other's committed writes).
import type { PGlite } from "@electric-sql/pglite";
import {
  AbortedTransactionError,
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from "kysely";
import type { DatabaseConnection, DatabaseIntrospector, Dialect, DialectAdapter, Driver } from "kysely";
import type { Kysely, QueryCompiler, QueryResult, TransactionSettings } from "kysely";

/** int8 as a JS number, as `connect()` configures pg and Neon: every driver returns the same types. */
export const PGLITE_PARSERS = { 20: (v: string) => Number(v) };

export interface PGliteDialectConfig {
  pglite: PGlite | Promise<PGlite>;
  /** How long a caller may wait for the single connection before failing. Default 30 s. */
  acquireTimeoutMs?: number;
  /** Called once the instance is closed (connect() gives back the data directory's lock). */
  onDestroy?: () => void;
}

export class PGliteDialect implements Dialect {
  readonly #config: PGliteDialectConfig;
  constructor(config: PGliteDialectConfig) {
    this.#config = config;
    // The promise is only awaited at the first query: keep an early rejection from being
    // reported as unhandled (it still surfaces from that query).
    Promise.resolve(config.pglite).catch(() => {});
  }
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.#config);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

const DML = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

class PGliteConnection implements DatabaseConnection {
  constructor(readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Without parameters use the simple protocol (exec): multi-statement scripts such as
    // migrations with plpgsql `$$` bodies then work, as they do with pg. The extended protocol
    // (query) would reject more than one statement.
    const result =
      query.parameters.length === 0
        ? (await this.pglite.exec(query.sql)).at(-1)
        : await this.pglite.query<R>(query.sql, [...query.parameters]);
    const r = (result ?? { rows: [], affectedRows: 0 }) as {
      rows: R[];
      affectedRows?: number;
      rowCount?: number;
      command?: string;
    };
    // Kysely's commit checks for a ROLLBACK tag (commit of an aborted transaction), as with pg.
    if (r.command === "COMMIT" || r.command === "ROLLBACK") {
      return { rows: [{ command: r.command }] as R[] };
    }
    const dml = r.command !== undefined && DML.has(r.command);
    return {
      rows: r.rows ?? [],
      numAffectedRows: dml ? BigInt(r.rowCount ?? r.affectedRows ?? 0) : undefined,
    };
  }

  // biome-ignore lint/correctness/useYield: Kysely's interface asks for a generator; this one only refuses.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGliteDialect does not support streaming queries");
  }
}

class PGliteDriver implements Driver {
  readonly #config: PGliteDialectConfig;
  #pglite: PGlite | undefined;
  #connection: PGliteConnection | undefined;
  #busy = false;
  readonly #waiters: Array<{ resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }> = [];

  constructor(config: PGliteDialectConfig) {
    this.#config = config;
  }

  async init(): Promise<void> {
    this.#pglite = await this.#config.pglite;
    this.#connection = new PGliteConnection(this.#pglite);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#connection) throw new Error("PGliteDialect: driver is not initialised or destroyed");
    if (this.#busy) await this.#wait();
    this.#busy = true;
    return this.#connection;
  }

  #wait(): Promise<void> {
    const ms = this.#config.acquireTimeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        // A waiter that never gets the connection is almost always a deadlock: fail loudly.
        timer: setTimeout(() => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(
            new Error(
              `PGlite connection is busy: waited ${ms} ms for its single connection. ` +
                "Using the outer `db` inside `db.transaction()` deadlocks on PGlite: " +
                "use the transaction handle (`trx`) for every query inside the transaction.",
            ),
          );
        }, ms),
      };
      this.#waiters.push(waiter);
    });
  }

  async releaseConnection(): Promise<void> {
    const next = this.#waiters.shift();
    if (next) {
      // Hand the connection straight to the next waiter (FIFO): #busy stays true.
      clearTimeout(next.timer);
      next.resolve();
    } else {
      this.#busy = false;
    }
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let sql = "begin";
    if (settings.isolationLevel || settings.accessMode) {
      sql = "start transaction";
      if (settings.isolationLevel) sql += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) sql += ` ${settings.accessMode}`;
    }
    await conn.executeQuery(CompiledQuery.raw(sql));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    const { rows } = await conn.executeQuery<{ command?: string }>(CompiledQuery.raw("commit"));
    if (rows[0]?.command === "ROLLBACK") {
      throw new AbortedTransactionError();
    }
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("rollback"));
  }

  async savepoint(conn: DatabaseConnection, name: string) {
    await conn.executeQuery(CompiledQuery.raw(`savepoint ${quoteIdent(name)}`));
  }

  async rollbackToSavepoint(conn: DatabaseConnection, name: string) {
    await conn.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoteIdent(name)}`));
  }

  async releaseSavepoint(conn: DatabaseConnection, name: string) {
    await conn.executeQuery(CompiledQuery.raw(`release savepoint ${quoteIdent(name)}`));
  }

  async destroy(): Promise<void> {
    const pglite = this.#pglite;
    this.#pglite = this.#connection = undefined;
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new Error("PGliteDialect: destroyed while waiting for the connection"));
    }
    try {
      if (pglite && !pglite.closed) await pglite.close();
    } finally {
      this.#config.onDestroy?.();
    }
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
