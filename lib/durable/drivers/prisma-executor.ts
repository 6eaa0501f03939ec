// A Kysely handle over one Prisma interactive transaction: each statement Kysely compiles (its text
// with $n placeholders, and its parameters) goes to the transaction's `$queryRawUnsafe`, so the
// store's typed statements run inside a transaction Prisma opened (lib/durable/prisma.ts,
// docs/guide/prisma.md). It writes no SQL of its own, and refuses to open, commit or roll back a
// transaction: Prisma does that. It imports nothing of Prisma: the client is the app's.
import type { CompiledQuery, DatabaseConnection, Kysely, QueryResult } from "kysely";
import { kyselyInTransaction, refuseStream } from "./kysely-in-transaction";

/** What the store needs of a Prisma transaction client (`tx` of `prisma.$transaction(async (tx) => …)`). */
export interface PrismaExecutor {
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
}

/** A Kysely handle whose every statement runs on `tx`. Made per transaction; nothing to close. */
export function kyselyOverPrisma<DB>(tx: PrismaExecutor): Kysely<DB> {
  return kyselyInTransaction<DB>(new PrismaConnection(tx), "Prisma");
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

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    return refuseStream("Prisma");
  }
}
