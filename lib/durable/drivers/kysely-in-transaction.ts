// A Kysely handle over a transaction an ORM opened (drizzle-executor.ts, prisma-executor.ts): every
// statement goes to the one connection given, and opening, committing or rolling back a
// transaction is refused, because the ORM does that.
import {
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";

/** A Kysely handle whose every statement runs on `connection`, inside `orm`'s transaction. Nothing to close. */
export function kyselyInTransaction<DB>(connection: DatabaseConnection, orm: string): Kysely<DB> {
  const dialect: Dialect = {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new InTransactionDriver(connection, orm),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
  return new Kysely<DB>({ dialect });
}

/** What a connection over an ORM's transaction answers to a streamed query: a refusal. */
export function refuseStream<R>(orm: string): AsyncIterableIterator<QueryResult<R>> {
  throw new Error(`a store handle over a ${orm} transaction does not stream`);
}

class InTransactionDriver implements Driver {
  constructor(
    readonly connection: DatabaseConnection,
    readonly orm: string,
  ) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async releaseConnection(): Promise<void> {}
  async beginTransaction(): Promise<void> {
    throw this.refused();
  }
  async commitTransaction(): Promise<void> {
    throw this.refused();
  }
  async rollbackTransaction(): Promise<void> {
    throw this.refused();
  }
  async destroy(): Promise<void> {}
  private refused(): Error {
    return new Error(
      `a store handle over a ${this.orm} transaction is already in one: ${this.orm} commits or rolls it back`,
    );
  }
}
