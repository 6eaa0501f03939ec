// Entry point for apps that use Prisma (the package's `durable-next/prisma`): a `tx` step whose
// body gets Prisma's interactive transaction and whose receipt commits inside that same
// transaction, exactly once, as `ctx.step.tx` does with Kysely (docs/guide/prisma.md;
// docs/rules.md, rule 14). It imports nothing of Prisma (the client is the app's, generated from
// its schema), and index.ts never imports this file.
import type { PGlite } from "@electric-sql/pglite";
import type { AnyKysely } from "./drivers/connect";
import { embeddedPGliteOf } from "./drivers/embedded";
import { kyselyOverPrisma, type PrismaExecutor } from "./drivers/prisma-executor";
import { InvalidInputError } from "./errors";
import type { CarriesTxWith, TxRunner } from "./steps/tx-step";
import { TX_WITH } from "./steps/tx-step";
import type { DurableTables } from "./store";
import type { Jsonified, StepInfo, StepOptions, WorkflowContext } from "./types";

/** What prismaTx needs of a Prisma client: its interactive `$transaction` (Prisma 7, a driver adapter). */
interface PrismaClientLike {
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: { maxWait?: number; timeout?: number }): PromiseLike<R>;
}

/** The transaction client `prisma.$transaction(async (tx) => …)` hands its callback. */
type PrismaTransactionOf<TClient extends PrismaClientLike> = Parameters<
  Extract<Parameters<TClient["$transaction"]>[0], (...args: any[]) => any>
>[0];

/**
 * A `tx` step on a Prisma client: `fn` runs in `prisma.$transaction(async (tx) => …)`, and the
 * step's receipt and its fence check are written in that same transaction, so the body's writes
 * commit once with the receipt or not at all. A replay answers the recorded result without calling
 * `fn`. `prisma` must be on the durable store's database (else the step fails with
 * InvalidInputError, nothing written).
 *
 * @example
 * const order = await prismaTx(ctx, "create-order", prisma, async (tx, s) => {
 *   return tx.order.create({ data: { id: s.externalKey, total } });
 * });
 */
export async function prismaTx<TClient extends PrismaClientLike, T>(
  ctx: Pick<WorkflowContext<any, any>, "step">,
  id: string,
  prisma: TClient,
  fn: (tx: PrismaTransactionOf<TClient>, s: StepInfo) => Promise<T>,
  options?: StepOptions,
): Promise<Jsonified<T>> {
  const txWith = (ctx?.step as Partial<CarriesTxWith> | undefined)?.[TX_WITH];
  if (typeof txWith !== "function") {
    throw new InvalidInputError(`prismaTx("${id}"): pass the workflow's ctx (the one its run() is given)`);
  }
  return (await txWith(id, runnerFor(prisma), fn, options)) as Jsonified<T>;
}

/**
 * The PGlite instance behind a handle `connect()` opened on the embedded database (local
 * development, `createTestDurable`), for `new PrismaPGlite(...)` of `pglite-prisma-adapter`: a
 * Prisma client on it shares the store's one session. The same as `pgliteOf` of
 * `durable-next/drizzle`, without loading Drizzle.
 * @throws InvalidInputError for a handle on a server (use the server's URL for Prisma too)
 */
export function pgliteOf(db: AnyKysely): PGlite {
  const pglite = embeddedPGliteOf(db);
  if (!pglite) throw new InvalidInputError("pgliteOf: this handle is not on PGlite opened by connect()");
  return pglite;
}

const RUNNERS = new WeakMap<object, TxRunner<any>>();

// Prisma closes an interactive transaction after `timeout` (5 s unless the client says otherwise)
// and gives up starting one after `maxWait` (2 s). A step's body may take its lease, and its
// receipt may be written until the invocation's deadline: the transaction is given that long
// (at least a second), so Prisma never cuts what the engine lets run.
const AT_LEAST_MS = 1_000;

/** How a step opens its transaction on `prisma`, made once per client. */
function runnerFor<TClient extends PrismaClientLike>(prisma: TClient): TxRunner<PrismaTransactionOf<TClient>> {
  const known = RUNNERS.get(prisma);
  if (known) return known;
  if (typeof prisma?.$transaction !== "function") {
    throw new InvalidInputError("prismaTx: prisma must be a Prisma client (new PrismaClient({ adapter }))");
  }
  const runner: TxRunner<PrismaTransactionOf<TClient>> = {
    foreign: { handle: prisma, name: "Prisma client" },
    open(home, work, remainingMs) {
      const limit = Math.max(AT_LEAST_MS, Math.ceil(remainingMs));
      // The body's own errors pass as they are: they are the step's failure.
      const transaction = async () =>
        await prisma.$transaction(
          (tx) => {
            if (typeof (tx as Partial<PrismaExecutor>)?.$queryRawUnsafe !== "function") {
              throw new InvalidInputError("prismaTx: the Prisma client's transaction has no $queryRawUnsafe");
            }
            return work(kyselyOverPrisma<DurableTables>(tx as PrismaExecutor), tx);
          },
          { maxWait: limit, timeout: limit },
        );
      // On PGlite (a client over pglite-prisma-adapter on the store's own instance) there is one
      // session: Prisma's transaction must exclude the store's own, which PGlite's lock does not
      // cover (drivers/pglite-dialect.ts holds its own). Holding the store's one connection around
      // it does, as lib/durable/drizzle.ts does for Drizzle's.
      if (embeddedPGliteOf(home)) return home.connection().execute(transaction);
      return transaction();
    },
  };
  RUNNERS.set(prisma, runner);
  return runner;
}
