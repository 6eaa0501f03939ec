// A Kysely handle over one Prisma interactive transaction: each statement Kysely compiles (its text
// with $n placeholders, and its parameters) goes to the transaction's `$queryRawUnsafe`, so the
// store's typed statements run inside a transaction Prisma opened (lib/durable/prisma.ts,
// docs/guide/prisma.md). It writes no SQL of its own, and refuses to open, commit or roll back a
// transaction: Prisma does that. It imports nothing of Prisma: the client is the app's.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";

/** What the store needs of a Prisma transaction client (`tx` of `prisma.$transaction(async (tx) => …)`). */
export interface PrismaExecutor {
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
}

/** A Kysely handle whose every statement runs on `tx`. Made per transaction; nothing to close. */
export function kyselyOverPrisma<DB>(tx: PrismaExecutor): Kysely<DB> {
  const connection = new PrismaConnection(tx);
  const dialect: Dialect = {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PrismaDriver(connection),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
  return new Kysely<DB>({ dialect });
}

/** A database error under Prisma's wrapper: its SQLSTATE as `code`, as pg and Neon report it. */
export class PrismaDatabaseError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = "PrismaDatabaseError";
  }
}

/**
 * Prisma reports a raw statement's failure as P2010 with the driver adapter's error in `meta`,
 * whose `cause` carries the SQLSTATE (`originalCode`): the store sees it as `code`, as it does
 * on every other handle. Anything else (a closed or expired transaction) passes as it is.
 */
function unwrapPrismaError(error: unknown): unknown {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: unknown } } } | null)?.meta;
  const cause = meta?.driverAdapterError?.cause as { originalCode?: unknown; originalMessage?: unknown } | undefined;
  if (typeof cause?.originalCode !== "string") return error;
  const message = typeof cause.originalMessage === "string" ? cause.originalMessage : String(error);
  return new PrismaDatabaseError(message, cause.originalCode, { cause: error });
}

class PrismaConnection implements DatabaseConnection {
  constructor(readonly tx: PrismaExecutor) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let rows: unknown;
    try {
      // Prisma numbers the parameters of a PostgreSQL statement $1, $2, ... as Kysely does.
      rows = await this.tx.$queryRawUnsafe(query.sql, ...query.parameters);
    } catch (error) {
      throw unwrapPrismaError(error);
    }
    return { rows: (Array.isArray(rows) ? rows : []) as R[] };
  }

  // biome-ignore lint/correctness/useYield: Kysely's interface asks for a generator; this one only refuses.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("a store handle over a Prisma transaction does not stream");
  }
}

class PrismaDriver implements Driver {
  constructor(readonly connection: PrismaConnection) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async releaseConnection(): Promise<void> {}
  async beginTransaction(): Promise<void> {
    throw refused();
  }
  async commitTransaction(): Promise<void> {
    throw refused();
  }
  async rollbackTransaction(): Promise<void> {
    throw refused();
  }
  async destroy(): Promise<void> {}
}

function refused(): Error {
  return new Error("a store handle over a Prisma transaction is already in one: Prisma commits or rolls it back");
}
