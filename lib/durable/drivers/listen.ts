// LISTEN for a notification channel on the database behind a handle made by `connect()`: a
// dedicated connection for pg and Neon (kept out of the pool, so the pool stays whole), PGlite's
// own `listen` in process. Worker mode wakes on it (docs/decisions.md, "Worker mode wakes on
// NOTIFY, not on a poll").
import type { Kysely } from "kysely";

// Kysely<any>: connect.ts imports this file, so its AnyKysely alias is spelled out here.
type AnyKysely = Kysely<any>;

/** Stops listening and closes what listening opened. */
export type StopListening = () => Promise<void>;

/**
 * Listens on `channel`: `onNotify` for each notification, `onError` once when the connection
 * drops (the listener is dead then; listen again).
 */
export type Listen = (channel: string, onNotify: () => void, onError: (error: Error) => void) => Promise<StopListening>;

const LISTENERS = new WeakMap<AnyKysely, Listen>();

/** Records how to listen on the database of `db` (connect() calls it). */
export function registerListen(db: AnyKysely, listen: Listen): void {
  LISTENERS.set(db, listen);
}

/** How to listen on the database of `db`; undefined for a handle not made by connect() (poll instead). */
export function listenOf(db: AnyKysely): Listen | undefined {
  return LISTENERS.get(db);
}

type NotifyingClient = {
  connect(): Promise<unknown>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: "notification", listener: () => void): unknown;
  on(event: "error" | "end", listener: (error?: Error) => void): unknown;
};

/** A listener over a dedicated pg or Neon client made by `newClient`. */
export function clientListen(newClient: () => NotifyingClient): Listen {
  return async (channel, onNotify, onError) => {
    const client = newClient();
    let open = true;
    const dropped = (error?: Error) => {
      if (!open) return;
      open = false;
      onError(error ?? new Error("the listening connection ended"));
    };
    client.on("error", dropped);
    client.on("end", dropped);
    client.on("notification", onNotify);
    try {
      await client.connect();
      await client.query(`listen ${quoteIdentifier(channel)}`);
    } catch (error) {
      open = false;
      await client.end().catch(() => {});
      throw error;
    }
    return async () => {
      open = false;
      await client.end().catch(() => {});
    };
  };
}

/** A listener over PGlite's in-process notifications. */
export function pgliteListen(pglite: {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}): Listen {
  return async (channel, onNotify) => {
    const unlisten = await pglite.listen(channel, () => onNotify());
    return () => unlisten();
  };
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
