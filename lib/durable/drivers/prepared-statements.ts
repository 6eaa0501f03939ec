// Hot statements planned once per connection (docs/performance.md, "Prepared statements"). Every
// call the store makes to a durable_* SQL function has a fixed text (`select durable_x($1, …)`),
// so the driver layer sends it as a named prepared statement: the server parses and plans it once
// per connection, and each later send is a Bind and an Execute. The store's SQL knows nothing of
// this; a pool made by connect() names such statements on its clients, any other text stays unnamed.
import { createHash } from "node:crypto";
import type { PostgresPool, PostgresPoolClient } from "kysely";

/** The most statements one connection prepares; texts past it go unnamed (server memory is per session). */
export const PREPARED_PER_CONNECTION = 64;

/**
 * A durable SQL function call, or a text the store marks `/* planned once *\/` at its start: a
 * text fixed whatever the values, so one prepared statement serves every send.
 */
const FIXED_TEXT = /^\s*(?:select\s+durable_[a-z0-9_]+\(|\/\* planned once \*\/)/i;

const MORE_COMMANDS = /;\s*\S/;

const NAME_PREFIX = "durable_ps_";

/** Whether a pool made by connect() names hot statements; createDurable({ preparedStatements }) flips it. */
export interface PreparedStatementsSwitch {
  on: boolean;
}

type QueryConfig = { name: string; text: string; values?: unknown[] };
type NamingClient = PostgresPoolClient & { query(config: QueryConfig): Promise<unknown> };

/** What a connection prepared, and which texts it refuses to name (after an error, see below). */
interface ClientStatements {
  named: Set<string>;
  refused: Set<string>;
}

const NAMES = new Map<string, string>();
const NAMES_CACHED = 1024;

/** The statement name of `text` when it is a durable function call, else undefined. */
export function statementNameOf(text: string): string | undefined {
  const cached = NAMES.get(text);
  if (cached !== undefined) return cached;
  // A prepared statement holds one command; a script (`select durable_x(); …`) stays unnamed, as
  // pg sends a text without parameters over the simple protocol, which runs several.
  if (!FIXED_TEXT.test(text) || MORE_COMMANDS.test(text)) return undefined;
  // 64 bits of the text's hash: two texts never share a name in practice, and a name is 27
  // characters, under the server's 63.
  const name = NAME_PREFIX + createHash("sha256").update(text).digest("hex").slice(0, 16);
  if (NAMES.size < NAMES_CACHED) NAMES.set(text, name);
  return name;
}

/** Parses DURABLE_PREPARED_STATEMENTS ("true"/"false", "1"/"0", "on"/"off"); unset means on. */
export function preparedStatementsFromEnv(
  value: string | undefined = process.env.DURABLE_PREPARED_STATEMENTS,
): boolean {
  const v = (value ?? "").trim().toLowerCase();
  if (v === "" || v === "true" || v === "1" || v === "on" || v === "yes") return true;
  if (v === "false" || v === "0" || v === "off" || v === "no") return false;
  throw new Error(`DURABLE_PREPARED_STATEMENTS is "true" or "false", not ${JSON.stringify(value)}`);
}

/** A pool whose clients send durable function calls as named statements while `switch.on`. */
export function withPreparedStatements(pool: PostgresPool, toggle: PreparedStatementsSwitch): PostgresPool {
  const patched = new WeakSet<PostgresPoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      if (!patched.has(client)) {
        patched.add(client);
        nameStatementsOn(client as NamingClient, toggle);
      }
      return client;
    },
    end: () => pool.end(),
  };
}

// The client is patched in place, not wrapped: pg's pool hands the same object back to Kysely,
// which calls release() on it.
function nameStatementsOn(client: NamingClient, toggle: PreparedStatementsSwitch) {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const statements: ClientStatements = { named: new Set(), refused: new Set() };
  client.query = ((...args: unknown[]) => {
    // Kysely sends (text, values); any other form (a cursor, a callback) passes through as it came.
    const [text, values] = args;
    const plain = typeof text === "string" && args.length <= 2 && (values === undefined || Array.isArray(values));
    const name = toggle.on && plain ? nameFor(statements, text) : undefined;
    if (name === undefined) return query(...args);
    return query({ name, text, values }).catch((error: unknown) => {
      throw explainRefusal(statements, name, error);
    });
  }) as NamingClient["query"];
}

function nameFor(statements: ClientStatements, text: string): string | undefined {
  const name = statementNameOf(text);
  if (name === undefined || statements.refused.has(name)) return undefined;
  if (!statements.named.has(name)) {
    if (statements.named.size >= PREPARED_PER_CONNECTION) return undefined;
    statements.named.add(name);
  }
  return name;
}

const MISSING = "26000"; // invalid_sql_statement_name: prepared statement "…" does not exist
const DUPLICATE = "42P05"; // duplicate_prepared_statement: prepared statement "…" already exists
const RESULT_CHANGED = "0A000"; // feature_not_supported: "cached plan must not change result type"

/**
 * A named statement the session does not hold (or already holds) means something between us and
 * the server moves statements across sessions: a transaction-mode pooler without prepared-statement
 * support (PgBouncer before 1.21). The error says how to turn naming off, and this connection sends
 * the text unnamed from then on, so it keeps working. A function replaced with another result type
 * (a migration while this process runs) invalidates the statement for good: unnamed from then on too.
 */
function explainRefusal(statements: ClientStatements, name: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  // No SQLSTATE: it failed in the driver before the server ran it (a value pg cannot serialize).
  // pg then closes the statement on the server but may still count it as prepared, so this
  // connection sends the text unnamed from then on, as after a refusal.
  const inDriver = typeof code !== "string";
  const replaced = code === RESULT_CHANGED && error instanceof Error && error.message.startsWith("cached plan");
  if (!inDriver && code !== MISSING && code !== DUPLICATE && !replaced) return error;
  statements.refused.add(name);
  statements.named.delete(name);
  if (inDriver) return error;
  if (!replaced && error instanceof Error && !error.message.includes("preparedStatements")) {
    error.message +=
      " (the connection pooler does not keep prepared statements, as PgBouncer before 1.21 in transaction" +
      " mode: set createDurable({ preparedStatements: false }) or DURABLE_PREPARED_STATEMENTS=false;" +
      ' docs/guide/deploying-to-vercel.md, "Prepared statements")';
  }
  return error;
}
