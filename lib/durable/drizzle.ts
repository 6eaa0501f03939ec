// Entry point for apps that use Drizzle (the package's `durable-next/drizzle`): a `tx` step whose
// body gets a Drizzle transaction and whose receipt commits inside that same transaction, exactly
// once, as `ctx.step.tx` does with Kysely (docs/guide/drizzle.md; docs/rules.md, rule 14).
// index.ts never imports this file, so an app without drizzle-orm never loads it.
import type { PGlite } from "@electric-sql/pglite";
import { entityKind, is } from "drizzle-orm";
import { type PgDatabase, PgTransaction } from "drizzle-orm/pg-core";
import type { AnyKysely } from "./drivers/connect";
import { type DrizzleExecutor, kyselyOverDrizzle } from "./drivers/drizzle-executor";
import { embeddedPGliteOf } from "./drivers/embedded";
import { registerWing } from "./engine/wings";
import { InvalidInputError } from "./errors";
import type { CarriesTxWith, TxRunner } from "./steps/tx-step";
import { TX_WITH } from "./steps/tx-step";
import type { DurableTables } from "./store";
import type { Jsonified, StepInfo, StepOptions, WorkflowContext } from "./types";

/** A Drizzle PostgreSQL database: what `drizzle(...)` of node-postgres, Neon serverless or PGlite returns. */
export type DrizzlePgDatabase = PgDatabase<any, any, any>;

/** The transaction `db.transaction(...)` hands its callback, with the db's schema types. */
export type DrizzleTransactionOf<TDb extends DrizzlePgDatabase> = Parameters<Parameters<TDb["transaction"]>[0]>[0];

/**
 * A `tx` step on a Drizzle db: `fn` runs in `db.transaction(...)`, and the step's receipt and its
 * fence check are written in that same transaction, so the body's writes commit once with the
 * receipt or not at all. A replay answers the recorded result without calling `fn`. `db` must be
 * on the durable store's database (else the step fails with InvalidInputError, nothing written).
 *
 * @example
 * const order = await drizzleTx(ctx, "create-order", db, async (tx, s) => {
 *   const [row] = await tx.insert(orders).values({ id: s.externalKey, total }).returning();
 *   return row;
 * });
 */
export async function drizzleTx<TDb extends DrizzlePgDatabase, T>(
  ctx: Pick<WorkflowContext<any, any>, "step">,
  id: string,
  db: TDb,
  fn: (tx: DrizzleTransactionOf<TDb>, s: StepInfo) => Promise<T>,
  options?: StepOptions,
): Promise<Jsonified<T>> {
  const txWith = (ctx?.step as Partial<CarriesTxWith> | undefined)?.[TX_WITH];
  if (typeof txWith !== "function") {
    throw new InvalidInputError(`drizzleTx("${id}"): pass the workflow's ctx (the one its run() is given)`);
  }
  return (await txWith(id, runnerFor(db), fn, options)) as Jsonified<T>;
}

/**
 * The PGlite instance behind a handle `connect()` opened on the embedded database (local
 * development, `createTestDurable`), for `drizzle(...)` of `drizzle-orm/pglite`: a Drizzle db on
 * it shares the store's one session.
 * @throws InvalidInputError for a handle on a server (use the server's URL for Drizzle too)
 */
export function pgliteOf(db: AnyKysely): PGlite {
  const pglite = embeddedPGliteOf(db);
  if (!pglite) throw new InvalidInputError("pgliteOf: this handle is not on PGlite opened by connect()");
  return pglite;
}

// `publish(name, data, { tx })` with a Drizzle transaction: the event and its runs are written by
// the store's statement on that transaction (docs/guide/events.md, "In the app's transaction").
registerWing({
  name: "drizzle",
  transaction: (tx) => (is(tx, PgTransaction) ? kyselyOverDrizzle<DurableTables>(tx as DrizzleExecutor) : undefined),
});

const RUNNERS = new WeakMap<object, TxRunner<any>>();

/** How a step opens its transaction on `db`, made once per db. */
function runnerFor<TDb extends DrizzlePgDatabase>(db: TDb): TxRunner<DrizzleTransactionOf<TDb>> {
  const known = RUNNERS.get(db);
  if (known) return known;
  if (typeof db?.transaction !== "function" || typeof db.execute !== "function") {
    throw new InvalidInputError("drizzleTx: db must be a Drizzle PostgreSQL database (drizzle(...) of pg-core)");
  }
  // PGlite has one session: a transaction Drizzle opens on it must exclude the store's own
  // transactions, which PGlite's lock does not cover (drivers/pglite-dialect.ts holds its own).
  // Holding the store's one connection around it does, in order with every other caller.
  const embedded = (db.constructor as { [entityKind]?: string })[entityKind] === "PgliteDatabase";
  const runner: TxRunner<DrizzleTransactionOf<TDb>> = {
    foreign: { handle: db, name: "Drizzle db" },
    open(home, work) {
      const transaction = () =>
        db.transaction((tx) => work(kyselyOverDrizzle<DurableTables>(tx as DrizzleExecutor), tx));
      return embedded ? home.connection().execute(transaction) : transaction();
    },
  };
  RUNNERS.set(db, runner);
  return runner;
}
