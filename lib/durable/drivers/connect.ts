// One entry point for a Kysely handle on PGlite (local dev, tests), node-postgres, or Neon's
// WebSocket Pool (Vercel). Every driver returns the same JS types, so code and tests written
// against one behave the same on the others.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { Kysely, PostgresDialect, type DatabaseConnection, type Dialect, type PostgresPool } from "kysely";
import type { PGlite } from "@electric-sql/pglite";
import { attachDatabasePool } from "@vercel/functions/db-connections";
import { lockDataDir } from "./data-dir-lock";
import { registerPGlite } from "./embedded";
import { clientListen, type Listen, pgliteListen, registerListen } from "./listen";
import { PGLITE_PARSERS, PGliteDialect } from "./pglite-dialect";
import {
  type PreparedStatementsSwitch,
  preparedStatementsFromEnv,
  withPreparedStatements,
} from "./prepared-statements";

export type DriverKind = "pglite" | "pg" | "neon";

/**
 * A Kysely handle over the app's database, whatever its own tables are: what `connect()` returns
 * and `createDurable({ db })` takes. The store narrows it to the durable_* tables (store/tables.ts);
 * this is the one place the toolkit says `Kysely<any>`.
 */
export type AnyKysely = Kysely<any>;

export interface ConnectOptions {
  /** Pool `max` for pg and Neon (default 10). PGlite always has one connection. */
  poolSize?: number;
  /** Called with the SQL of every statement sent to the server (incl. begin/commit/rollback). */
  onQuery?: (sql: string) => void;
  /** Force a driver; otherwise chosen by `driverKindOf` from the URL and DURABLE_DRIVER. */
  driver?: DriverKind;
  /**
   * Where worker mode LISTENs: a direct (not pooled) connection, since a transaction-mode pooler
   * such as Neon's `-pooler` host does not carry notifications. Default: DATABASE_URL_UNPOOLED
   * when connecting to DATABASE_URL (what Neon's Vercel integration sets), else the URL with
   * Neon's `-pooler` host suffix removed, else the URL itself.
   */
  listenUrl?: string;
  /**
   * pg and Neon: send the store's SQL function calls as named prepared statements, parsed and
   * planned once per connection (docs/guide/deploying-to-vercel.md, "Prepared statements").
   * Default: DURABLE_PREPARED_STATEMENTS, else true. Turn off behind a pooler that refuses them
   * (PgBouncer before 1.21 in transaction mode). PGlite ignores it.
   */
  preparedStatements?: boolean;
}

const ACCEPTED =
  'accepted: no URL (PGlite in ./.durable/), "memory://" (in-memory PGlite), ' +
  "or a postgres:// / postgresql:// URL (node-postgres; Neon's driver for *.neon.tech hosts " +
  "or with DURABLE_DRIVER=neon)";

/** Which driver `connect(url)` uses. Pure apart from the default of `override`. */
export function driverKindOf(url?: string, override: string | undefined = process.env.DURABLE_DRIVER): DriverKind {
  const forced = override || undefined;
  if (forced !== undefined && forced !== "pglite" && forced !== "pg" && forced !== "neon") {
    throw new Error(`Unknown database driver "${forced}": use "pglite", "pg" or "neon"`);
  }
  if (!url || url === "memory://") {
    // Fail rather than silently fall back to PGlite when a server driver was asked for.
    if (forced && forced !== "pglite") {
      throw new Error(`Driver "${forced}" needs a postgres:// URL (set DATABASE_URL); ${ACCEPTED}`);
    }
    return "pglite";
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    if (forced === "pglite") throw new Error(`Driver "pglite" cannot open a postgres:// URL; ${ACCEPTED}`);
    if (forced) return forced;
    let host = "";
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      throw new Error(`Invalid database URL "${redact(url)}"; ${ACCEPTED}`);
    }
    return host.endsWith("neon.tech") ? "neon" : "pg";
  }
  throw new Error(`Unsupported database URL "${redact(url)}"; ${ACCEPTED}`);
}

export async function connect(url?: string, options: ConnectOptions = {}): Promise<AnyKysely> {
  const target = url ?? process.env.DATABASE_URL;
  const kind = driverKindOf(target, options.driver ?? process.env.DURABLE_DRIVER);
  let dialect: Dialect;
  let listen: Listen;
  let embedded: PGlite | undefined; // the embedded instance, for embeddedPGliteOf (embedded.ts)
  let prepared: PreparedStatementsSwitch | undefined; // pg and Neon only
  if (kind === "pglite") {
    const { PGlite } = await import("@electric-sql/pglite");
    const opts = { parsers: PGLITE_PARSERS };
    let dir: string | undefined;
    if (target !== "memory://") {
      // PGlite does not create missing parent folders of its data dir.
      dir = path.join(process.cwd(), ".durable", "pglite");
      mkdirSync(dir, { recursive: true });
    }
    // One process per data directory (data-dir-lock.ts); given back when the db is destroyed.
    const unlock = dir ? lockDataDir(dir) : undefined;
    let pglite: Awaited<ReturnType<typeof PGlite.create>>;
    try {
      // Awaited here so a broken data dir fails connect(), not some later query.
      pglite = dir ? await PGlite.create(dir, opts) : await PGlite.create(opts);
    } catch (error) {
      unlock?.();
      throw error;
    }
    dialect = new PGliteDialect({ pglite, onDestroy: unlock });
    listen = pgliteListen(pglite);
    embedded = pglite;
  } else {
    const listenAt = listenUrlFor(target!, options.listenUrl);
    const { pool, newClient } = await createPool(kind, target!, listenAt, options.poolSize ?? 10);
    prepared = { on: options.preparedStatements ?? preparedStatementsFromEnv() };
    dialect = new PostgresDialect({ pool: withPreparedStatements(pool, prepared) });
    listen = clientListen(newClient);
  }
  if (options.onQuery) dialect = withQueryHook(dialect, options.onQuery);
  const db = new Kysely<any>({ dialect });
  // Kysely's destroy() closes a driver only once a statement initialised it: initialise the
  // embedded one now, so that destroying a handle that ran nothing (a command refused before its
  // first statement: cli/runs.ts) still closes the database and gives back its lock.
  if (embedded) await db.getExecutor().provideConnection(async () => {});
  registerListen(db, listen);
  if (embedded) registerPGlite(db, embedded);
  if (prepared) PREPARED.set(db, prepared);
  return db;
}

const PREPARED = new WeakMap<AnyKysely, PreparedStatementsSwitch>();

/**
 * Turns named prepared statements on or off for a handle made by connect() (createDurable's
 * `preparedStatements`); from the next statement on. Without effect on PGlite and on a Kysely the
 * app built itself, whose statements stay unnamed.
 */
export function setPreparedStatements(db: AnyKysely, on: boolean): void {
  const toggle = PREPARED.get(db);
  if (toggle) toggle.on = on;
}

type TypeParsers = { getTypeParser(id: number, format?: any): any };

// pg and Neon return int8 as a string; PGlite (with PGLITE_PARSERS) as a number. Override per
// pool (not pg's global `types`) so other pg users in the process keep their own behaviour.
function int8AsNumber(base: TypeParsers): TypeParsers {
  const toNumber = (v: string) => Number(v);
  return {
    getTypeParser: (id: number, format?: any) =>
      id === 20 && format !== "binary" ? toNumber : base.getTypeParser(id, format),
  };
}

/** The direct connection string for LISTEN (see ConnectOptions.listenUrl). */
export function listenUrlFor(url: string, explicit?: string): string {
  if (explicit) return explicit;
  if (url === process.env.DATABASE_URL && process.env.DATABASE_URL_UNPOOLED) return process.env.DATABASE_URL_UNPOOLED;
  return url.replace(/^([^@]*@[^/:?]*?)-pooler\./, "$1.");
}

async function createPool(
  kind: "pg" | "neon",
  connectionString: string,
  listenAt: string,
  max: number,
): Promise<{ pool: PostgresPool; newClient: () => any }> {
  type ErrorSource = { on(event: "error", listener: (e: Error) => void): unknown };
  let pool: PostgresPool & ErrorSource & { on(event: "connect", listener: (client: ErrorSource) => void): unknown };
  let newClient: () => any;
  if (kind === "neon") {
    const neon = await import("@neondatabase/serverless");
    if (typeof globalThis.WebSocket === "undefined" && !neon.neonConfig.webSocketConstructor) {
      // Node 20 has no global WebSocket; Neon's Pool speaks Postgres over one.
      const { default: ws } = await import("ws");
      neon.neonConfig.webSocketConstructor = ws;
    }
    const proxy = process.env.DURABLE_NEON_WS_PROXY;
    if (proxy) routeThroughWsProxy(neon.neonConfig, proxy);
    const types = int8AsNumber(neon.types as TypeParsers);
    pool = new neon.Pool({ connectionString, max, types }) as unknown as typeof pool;
    newClient = () => new neon.Client({ connectionString: listenAt });
  } else {
    const { default: pg } = await import("pg");
    const types = int8AsNumber(pg.types as TypeParsers);
    pool = new pg.Pool({ connectionString, max, types }) as unknown as typeof pool;
    newClient = () => new pg.Client({ connectionString: listenAt });
  }
  // A client whose connection drops (server restart, pg_terminate_backend, Neon scale-to-zero)
  // emits 'error': on the pool while idle, on the client itself while checked out (between the
  // statements of a transaction, say). Unhandled, either crashes the process; handled, the
  // statement in flight fails and the pool replaces the client.
  pool.on("error", (e) => console.warn(`[durable] idle database connection error: ${e.message}`));
  pool.on("connect", (client) => {
    client.on("error", (e) => console.warn(`[durable] database connection error: ${e.message}`));
  });
  // On Vercel's Fluid compute, idle clients are closed before the instance suspends, so a
  // suspended instance holds no connection (docs/guide/deploying-to-vercel.md, "Connections"); elsewhere a no-op.
  attachDatabasePool(pool as never);
  return { pool, newClient };
}

type NeonWsConfig = {
  wsProxy: unknown;
  useSecureWebSocket: boolean;
  pipelineTLS: boolean;
  pipelineConnect: false | "password";
  coalesceWrites: boolean;
};

/**
 * DURABLE_NEON_WS_PROXY="host:port/path": Neon's driver reaches a Postgres without TLS through a
 * plain WebSocket proxy (a local server in tests or dev, e.g. Neon's local proxy), asking for
 * `ws://host:port/path?address=<db host>:<db port>`. The config is process-global in the driver,
 * which is why it comes from the environment of the process that opens the pool (a Next server).
 */
function routeThroughWsProxy(config: NeonWsConfig, proxy: string) {
  config.wsProxy = proxy;
  config.useSecureWebSocket = false; // ws://, not wss://
  config.pipelineTLS = false; // no TLS inside the WebSocket either
  config.pipelineConnect = false; // wait for the server's auth request: trust auth sends none
  config.coalesceWrites = false; // on loopback, batching writes only adds latency
}

// Counts round trips at the driver. The connection is patched in place rather than wrapped:
// Kysely's PostgresDriver calls private methods on the exact object it handed out (release,
// mark-for-discard), and a wrapper object would break them.
const HOOKED = new WeakSet<DatabaseConnection>();

function withQueryHook(dialect: Dialect, onQuery: (sql: string) => void): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      driver.acquireConnection = async () => {
        const conn = await acquire();
        if (HOOKED.has(conn)) return conn;
        HOOKED.add(conn);
        const execute = conn.executeQuery.bind(conn);
        const stream = conn.streamQuery.bind(conn);
        conn.executeQuery = (q) => {
          onQuery(q.sql);
          return execute(q);
        };
        conn.streamQuery = (q, chunkSize) => {
          onQuery(q.sql);
          return stream(q, chunkSize);
        };
        return conn;
      };
      return driver;
    },
  };
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@");
}
