// The body of a `tx` step: the user's statements, the receipt and its fence check in one
// transaction (docs/rules.md, rule 14); effect-steps.ts runs it under the effect-step rules.
// Who opens the transaction is a TxRunner: Kysely's `db.transaction()` for `ctx.step.tx`, or
// another library's transaction on the same database (lib/durable/drizzle.ts, lib/durable/prisma.ts),
// whose receipt goes through a store handle over that transaction (docs/guide/drizzle.md).
import type { Transaction } from "kysely";
import type { StepHost } from "../engine/run/step-host";
import { InvalidInputError, ResultTooLargeError, StepLeaseLostError } from "../errors";
import type { DurableDb, Executor } from "../store";
import type { StepInfo, StepOptions } from "../types";
import { type Body, type BodyResult, Rollback } from "./effect-body";
import { resultJson } from "./effect-body";

/**
 * Opens the transaction of a `tx` step and runs `work` in it: it commits when `work` resolves and
 * rolls back when `work` throws. `work` is given the store's handle on the transaction (the
 * receipt is written through it) and the handle the body gets.
 */
export interface TxRunner<H> {
  /**
   * `home` is the durable store's own handle (PGlite's one session is held through it);
   * `remainingMs`, what is left of the invocation's budget: no receipt is written after it, so a
   * library that times its transactions out (Prisma) is given that long.
   */
  open<R>(home: DurableDb, work: (store: Executor, handle: H) => Promise<R>, remainingMs: number): Promise<R>;
  /**
   * Set for a transaction not opened on the store's own handle: what it is opened on (a Drizzle
   * db, a Prisma client), and how to name it in an error. Before the first body on it, the transaction must see
   * this run under this owner's fence, or the step is refused (the same database).
   */
  foreign?: { handle: object; name: string };
}

/** A `tx` step whose transaction `runner` opens; answers the step's result as `ctx.step.tx` does. */
export type TxWith = <T, H>(
  id: string,
  runner: TxRunner<H>,
  fn: (tx: H, s: StepInfo) => Promise<T>,
  options?: StepOptions,
) => Promise<unknown>;

/**
 * The key under which `ctx.step` carries its TxWith. Not part of StepApi (users call
 * lib/durable/drizzle.ts, which reads it); `Symbol.for`, so two loaded copies of the toolkit agree.
 */
export const TX_WITH: unique symbol = Symbol.for("durable-next.tx-with");

/** `ctx.step` as steps/step-api.ts builds it. */
export interface CarriesTxWith {
  readonly [TX_WITH]: TxWith;
}

/** The runner of `ctx.step.tx`: a Kysely transaction on the store's own handle. */
export const kyselyTxRunner: TxRunner<Transaction<any>> = {
  open: (home, work) => home.transaction().execute((trx) => work(trx, trx as Transaction<any>)),
};

/** The body of `tx` step `id`: `fn` inside a transaction that commits its receipt too. */
export function txBody<T, H>(
  host: StepHost,
  id: string,
  runner: TxRunner<H>,
  fn: (tx: H, s: StepInfo) => Promise<T>,
): Body {
  return async (s, seq) => {
    const started = performance.now();
    let result!: BodyResult;
    let bodyReturned = false;
    // One transaction: the body's statements, the receipt and its fence check commit together.
    await host
      .transaction(runner, async (store, handle) => {
        if (runner.foreign) await confirmSameDatabase(host, id, store, runner.foreign);
        const value = await fn(handle, s);
        bodyReturned = true;
        await host.failpoint?.("tx.after-effect");
        const json = resultJson(host, value, id);
        let refused = false;
        const receipt = await host.write(
          {
            stepId: id,
            seq,
            kind: "tx",
            status: "completed",
            attempt: s.attempt,
            externalKey: s.externalKey,
            resultJson: json,
            elapsedMs: performance.now() - started,
          },
          store,
          () => {
            refused = true;
          },
        );
        // Lost fence, or a first write already recorded: roll the effect back.
        if (!receipt || receipt.conflict) throw new Rollback(receipt, refused);
        await host.failpoint?.("tx.after-receipt");
        result = { json, receipt };
      })
      .catch(async (error) => {
        await settleFailedTransaction(host, id, error, bodyReturned);
        throw error;
      });
    return result;
  };
}

// Foreign handles whose transactions were shown to reach a store: a db object stays on its
// database, so one look per pair and process is enough.
const CONFIRMED = new WeakMap<object, WeakSet<object>>();
// SQLSTATEs of a database without the durable schema: undefined_table, undefined_function,
// invalid_schema_name.
const MISSING = new Set(["42P01", "42883", "3F000"]);

/**
 * Before the body, in the foreign transaction: the run, under this owner's fence, must be visible
 * there, which only the durable store's own database shows. Otherwise the receipt would be
 * written (or fail) elsewhere while the effect commits: the step is refused instead, before
 * anything is written, and the transaction rolls back.
 */
async function confirmSameDatabase(
  host: StepHost,
  id: string,
  store: Executor,
  foreign: { handle: object; name: string },
): Promise<void> {
  if (CONFIRMED.get(foreign.handle)?.has(host.storeKey)) return;
  let state: "owned" | null;
  try {
    state = await host.heartbeat(id, store);
  } catch (error) {
    // The database is the store's, but the claim is gone: the host stopped the execution as a
    // lost owner; write nothing.
    if (error instanceof StepLeaseLostError) throw new Rollback(null, false);
    // A missing table, function or schema is the wrong database; anything else is the database's
    // failure, and goes the way of any failed attempt.
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || !MISSING.has(code)) throw error;
    throw notTheStore(id, foreign.name, `the durable tables are not reachable there (${String(error)})`);
  }
  if (state === null) throw notTheStore(id, foreign.name, `run "${host.runId}" is not in that database`);
  const stores = CONFIRMED.get(foreign.handle) ?? new WeakSet<object>();
  stores.add(host.storeKey);
  CONFIRMED.set(foreign.handle, stores);
}

function notTheStore(id: string, name: string, why: string): InvalidInputError {
  return new InvalidInputError(
    `tx step "${id}": the ${name} must be on the durable store's database, with the durable_* tables ` +
      `on its search_path, so that the step's receipt commits in its transaction; ${why}. Nothing was written.`,
  );
}

/** After a `tx` transaction that did not commit: note a rollback, or stop when the commit failed. */
async function settleFailedTransaction(host: StepHost, id: string, error: unknown, bodyReturned: boolean) {
  // The receipt's statement noted the refusal or the conflict inside the transaction,
  // which rolled back with it: note it again, now, on its own.
  if (error instanceof Rollback) await noteRolledBack(host, id, error);
  // The body succeeded but its receipt or the commit failed under it: not a step
  // failure (rule 14). Stop; the next owner finds no receipt and re-runs it as a reclaim.
  if (bodyReturned && !(error instanceof Rollback) && !ResultTooLargeError.is(error) && !InvalidInputError.is(error)) {
    host.settings.log(`[${host.runId}] tx step "${id}" could not commit its receipt: ${String(error)}`);
    void host.stop({ kind: "abandon", reason: "the database failed under a tx receipt" });
  }
}

/** The event a rolled-back `tx` receipt's statement wrote, written again after the rollback. */
async function noteRolledBack(host: StepHost, id: string, rollback: Rollback): Promise<void> {
  const result = rollback.result;
  const event =
    result?.owned && result.conflict
      ? { kind: "step.outcome-conflict", data: { recorded: result.recorded.status, late: "completed" } }
      : rollback.refused
        ? { kind: "fence.rejected", data: { write: "tx", late: "completed" } }
        : null;
  if (!event) return;
  try {
    await host.note(id, event);
  } catch (error) {
    host.settings.log(`[${host.runId}] could not note ${event.kind} of tx step "${id}": ${String(error)}`);
  }
}
