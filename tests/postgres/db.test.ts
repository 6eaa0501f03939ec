import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type DriverKind } from "@/lib/durable/drivers/connect";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

const URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;

beforeAll(async () => {
  proxy = await startNeonProxy();
  configureNeonForLocalProxy(proxy.port);
});
afterAll(async () => {
  await proxy?.close();
});

// Opens a handle, hands it a fresh table name, and always drops the table and closes the pool.
async function withDb(
  driver: DriverKind,
  fn: (db: Kysely<any>, table: string, queries: string[]) => Promise<void>,
): Promise<void> {
  const queries: string[] = [];
  const db = await connect(URL, { driver, poolSize: 2, onQuery: (q) => queries.push(q) });
  const table = unique("db_test");
  try {
    await fn(db, table, queries);
  } finally {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
    await db.destroy();
  }
}

describe.each<DriverKind>(["pg", "neon"])("connect() with the %s driver on the real server", (driver) => {
  it("returns the same JS types as PGlite", () =>
    withDb(driver, async (db) => {
      const { rows } =
        await sql<any>`select 1::int8 as a, 2::int4 as b, now() as c, '{"x":1}'::jsonb as d, true as e`.execute(db);
      expect(rows[0]).toMatchObject({ a: 1, b: 2, d: { x: 1 }, e: true });
      expect(rows[0].c).toBeInstanceOf(Date);
      const r = await db.selectNoFrom(sql<number>`count(*)`.as("n")).executeTakeFirstOrThrow();
      expect(r.n).toBe(1);
    }));

  it("runs a multi-statement script without parameters", () =>
    withDb(driver, (db) =>
      // Temp objects live in one session: pin one pooled connection for the script and the check.
      db.connection().execute(async (conn) => {
        await sql
          .raw(`
            create temp table script_t (v int);
            create function pg_temp.add_one(x int) returns int language plpgsql as $$
            begin return x + 1; end $$;
            insert into script_t values (pg_temp.add_one(41));
            select v from script_t;`)
          .execute(conn);
        const { rows } = await sql`select v from script_t`.execute(conn);
        expect(rows).toEqual([{ v: 42 }]);
      }),
    ));

  it("counts round trips with onQuery", () =>
    withDb(driver, async (db, table, queries) => {
      await sql`create table ${sql.table(table)} (v text)`.execute(db);
      queries.length = 0;
      await db.selectNoFrom(sql`1`.as("x")).execute();
      expect(queries).toHaveLength(1);
      queries.length = 0;
      await db.transaction().execute((trx) => trx.insertInto(table).values({ v: "a" }).execute());
      expect(queries.map((q) => q.split(" ")[0])).toEqual(["begin", "insert", "commit"]);
    }));

  it("commits and rolls back concurrent transactions independently", () =>
    withDb(driver, async (db, table) => {
      await sql`create table ${sql.table(table)} (v text)`.execute(db);
      const [a, b] = await Promise.allSettled([
        db.transaction().execute((trx) => trx.insertInto(table).values({ v: "committed" }).execute()),
        db.transaction().execute(async (trx) => {
          await trx.insertInto(table).values({ v: "rolled back" }).execute();
          throw new Error("boom");
        }),
      ]);
      expect([a.status, b.status]).toEqual(["fulfilled", "rejected"]);
      expect(await db.selectFrom(table).select("v").execute()).toEqual([{ v: "committed" }]);
    }));
});

it("the neon driver goes through the WebSocket proxy, the pg driver does not", async () => {
  for (const [driver, viaProxy] of [
    ["neon", 1],
    ["pg", 0],
  ] as const) {
    const before = proxy!.connections;
    const db = await connect(URL, { driver });
    try {
      await sql`select 1`.execute(db);
    } finally {
      await db.destroy();
    }
    expect(proxy!.connections - before).toBe(viaProxy);
  }
});

it("pg returns no rows for a multi-statement script (PGlite returns the last statement's)", async () => {
  // Kysely's Postgres driver reads `rows` off pg's array of results: scripts are for effects only.
  const db = await connect(URL, { driver: "pg" });
  try {
    const { rows } = await sql.raw("select 1 as a; select 2 as b").execute(db);
    expect(rows).toEqual([]);
  } finally {
    await db.destroy();
  }
});
