import { mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { PGLITE_PARSERS, PGliteDialect } from "@/lib/durable/drivers/pglite-dialect";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("connect() on in-memory PGlite", () => {
  let db: Kysely<any>;
  let queries: string[] = [];

  beforeAll(async () => {
    db = await connect("memory://", { onQuery: (q) => queries.push(q) });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it("returns the same JS types as the server drivers", async () => {
    const { rows } =
      await sql<any>`select 1::int8 as a, 2::int4 as b, now() as c, '{"x":1}'::jsonb as d, true as e`.execute(db);
    expect(rows[0]).toMatchObject({ a: 1, b: 2, d: { x: 1 }, e: true });
    expect(rows[0].c).toBeInstanceOf(Date);
    const r = await db.selectNoFrom(sql<number>`count(*)`.as("n")).executeTakeFirstOrThrow();
    expect(r.n).toBe(1); // count(*) is int8
  });

  it("runs a multi-statement script without parameters and returns the last rows", async () => {
    const { rows } = await sql
      .raw(`
        create temp table script_t (v int);
        create function pg_temp.add_one(x int) returns int language plpgsql as $$
        begin return x + 1; end $$;
        insert into script_t values (pg_temp.add_one(41));
        select v from script_t;`)
      .execute(db);
    expect(rows).toEqual([{ v: 42 }]);
  });

  it("passes parameters and reports affected rows", async () => {
    await sql`create temp table params_t (id int8 primary key, body jsonb)`.execute(db);
    const ins = await db
      .insertInto("params_t")
      .values({ id: 7, body: JSON.stringify({ k: [1] }) })
      .executeTakeFirst();
    expect(ins.numInsertedOrUpdatedRows).toBe(1n);
    const upd = await db
      .updateTable("params_t")
      .set({ body: JSON.stringify({ k: 2 }) })
      .where("id", "=", 7)
      .executeTakeFirst();
    expect(upd.numUpdatedRows).toBe(1n);
    expect(await db.selectFrom("params_t").selectAll().execute()).toEqual([{ id: 7, body: { k: 2 } }]);
  });

  it("counts round trips with onQuery", async () => {
    await sql`create temp table count_t (v text)`.execute(db);
    queries = [];
    await db.selectNoFrom(sql`1`.as("x")).execute();
    expect(queries).toHaveLength(1);
    queries = [];
    await db.transaction().execute((trx) => trx.insertInto("count_t").values({ v: "a" }).execute());
    expect(queries.map((q) => q.split(" ")[0])).toEqual(["begin", "insert", "commit"]);
  });

  it("serialises concurrent transactions: a rollback keeps the other's committed row", async () => {
    await sql`create temp table tx_t (v text)`.execute(db);
    const committed = db.transaction().execute(async (trx) => {
      await trx.insertInto("tx_t").values({ v: "committed" }).execute();
      await sleep(30);
    });
    const failed = db.transaction().execute(async (trx) => {
      await trx.insertInto("tx_t").values({ v: "rolled back" }).execute();
      await sleep(10);
      throw new Error("boom");
    });
    const [a, b] = await Promise.allSettled([committed, failed]);
    expect(a.status).toBe("fulfilled");
    expect(b.status).toBe("rejected");
    expect(await db.selectFrom("tx_t").select("v").execute()).toEqual([{ v: "committed" }]);
  });
});

describe("PGliteDialect", () => {
  it("times out with a clear message when the outer db is used inside a transaction", async () => {
    const db = new Kysely<any>({
      dialect: new PGliteDialect({ pglite: PGlite.create({ parsers: PGLITE_PARSERS }), acquireTimeoutMs: 100 }),
    });
    try {
      await sql`create table dead_t (v int)`.execute(db);
      const started = Date.now();
      const tx = db.transaction().execute(async (trx) => {
        await trx.insertInto("dead_t").values({ v: 1 }).execute();
        await db.selectFrom("dead_t").selectAll().execute(); // wrong handle: waits for trx's connection
      });
      await expect(tx).rejects.toThrow(/PGlite connection is busy.*outer `db` inside `db.transaction\(\)` deadlocks/s);
      expect(Date.now() - started).toBeLessThan(5_000);
      // The transaction rolled back and released the connection: the db is usable again.
      expect(await db.selectFrom("dead_t").selectAll().execute()).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

describe("connect() without a URL", () => {
  it("persists PGlite under ./.durable/, creating missing folders", async () => {
    const cwd = process.cwd();
    const dir = mkdtempSync(path.join(tmpdir(), "durable-db-"));
    const before = process.env.DATABASE_URL;
    delete process.env.DATABASE_URL;
    process.chdir(dir);
    try {
      const db = await connect(undefined, { driver: "pglite" });
      try {
        await sql`create table kept (v int); insert into kept values (1)`.execute(db);
      } finally {
        await db.destroy();
      }
      expect(existsSync(path.join(dir, ".durable", "pglite", "PG_VERSION"))).toBe(true);
    } finally {
      process.chdir(cwd);
      if (before !== undefined) process.env.DATABASE_URL = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
