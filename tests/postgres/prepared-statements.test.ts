// Hot statements planned once per connection (docs/performance.md, "Prepared statements"): on pg
// and on Neon's driver the store's SQL function calls are named prepared statements, parsed once
// per session and executed many times; `preparedStatements: false` (or the environment variable)
// sends them unnamed. Proved from the server's own view of the pool's one session.
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, InvalidInputError, type Durable } from "@/lib/durable";
import type { AnyKysely, ConnectOptions } from "@/lib/durable/drivers/connect";
import { preparedStatementsFromEnv, statementNameOf } from "@/lib/durable/drivers/prepared-statements";
import { createTestDatabase } from "../helpers/databases";
import { configureNeonForLocalProxy, startNeonProxy } from "../helpers/neon-proxy";

const RUNS = 12;

const threeSteps = defineWorkflow({
  name: "prepared-three-steps",
  input: z.object({}),
  async run(ctx) {
    for (const id of ["a", "b", "c"]) await ctx.step.run(id, () => id);
    return "done";
  },
});
const sleeper = defineWorkflow({
  name: "prepared-sleeper",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("before", () => 1);
    await ctx.step.sleep("nap", "1h");
  },
});

type Prepared = { name: string; statement: string; parameter_types: string[]; executions: number };

/** The session's named statements of ours (the pool has one session: poolSize 1). */
async function preparedOf(db: AnyKysely): Promise<Prepared[]> {
  const { rows } = await sql<Prepared>`
    select name, statement, parameter_types::text[] as parameter_types,
           (generic_plans + custom_plans)::int as executions
      from pg_prepared_statements where name like 'durable_ps_%' order by name`.execute(db);
  return rows;
}

/** A pool of one session, the workload run on it, and what was sent per statement name. */
async function drainOn(url: string, options: ConnectOptions, durableOptions: { preparedStatements?: boolean } = {}) {
  const sends = new Map<string, number>();
  const db = await connect(url, {
    ...options,
    poolSize: 1,
    onQuery: (text) => {
      const name = statementNameOf(text);
      if (name) sends.set(name, (sends.get(name) ?? 0) + 1);
    },
  });
  const durable = createDurable({ db, workflows: [threeSteps, sleeper], ...durableOptions });
  await durable.migrate();
  await drain(durable);
  return { db, durable, sends };
}

async function drain(durable: Durable) {
  for (let i = 0; i < RUNS; i++) await durable.start(threeSteps, {}, { id: `three-${i}` });
  await durable.start(sleeper, {}, { id: "sleeper" });
  const report = await durable.tick({ budgetMs: 40_000 });
  expect(report).toMatchObject({ claimed: RUNS + 1, completed: RUNS });
  expect((await durable.status("three-0"))?.status).toBe("completed");
  expect((await durable.status("sleeper"))?.status).toBe("waiting");
}

const HOT = [
  "durable_claim_run(",
  "durable_record_step(",
  "durable_finish_and_claim(",
  "durable_suspend_run(",
  "min(wake_at)",
];

/** Each hot statement is one prepared statement of the session, typed, executed at every send. */
function expectPlannedOnce(prepared: Prepared[], sends: Map<string, number>) {
  for (const hot of HOT) {
    expect(
      prepared.filter((p) => p.statement.includes(hot)),
      hot,
    ).toHaveLength(1);
  }
  for (const p of prepared) {
    // Parsed once (one row for the name), executed at every send of its text.
    expect(p.executions, p.statement).toBe(sends.get(p.name));
    expect(p.parameter_types, p.statement).not.toContain("unknown");
  }
  const receipts = prepared.find((p) => p.statement.includes("durable_record_step("))!;
  expect(receipts.executions).toBeGreaterThanOrEqual(RUNS);
}

const opened: Array<{ destroy(): Promise<void> } | Durable> = [];
let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
afterAll(async () => {
  for (const handle of opened) await ("close" in handle ? handle.close() : handle.destroy());
  await proxy?.close();
});

describe("on pg", () => {
  it("the hot statements are named, parsed once per connection and executed at every send", async () => {
    const { db, durable, sends } = await drainOn(await createTestDatabase("durable_prepared_pg"), { driver: "pg" });
    opened.push(durable, db);
    expectPlannedOnce(await preparedOf(db), sends);
  });

  it("createDurable({ preparedStatements: false }) sends every statement unnamed", async () => {
    const url = await createTestDatabase("durable_prepared_off");
    const { db, durable } = await drainOn(url, { driver: "pg" }, { preparedStatements: false });
    opened.push(durable, db);
    expect(await preparedOf(db)).toEqual([]);
  });

  it("DURABLE_PREPARED_STATEMENTS=false turns them off for connect(), and createDurable's option wins", async () => {
    const url = await createTestDatabase("durable_prepared_env");
    process.env.DURABLE_PREPARED_STATEMENTS = "false";
    let off: Awaited<ReturnType<typeof drainOn>>;
    let on: Awaited<ReturnType<typeof drainOn>>;
    try {
      off = await drainOn(url, { driver: "pg" });
      opened.push(off.durable, off.db);
      await sql`truncate durable_runs cascade`.execute(off.db);
      on = await drainOn(url, { driver: "pg" }, { preparedStatements: true });
      opened.push(on.durable, on.db);
    } finally {
      delete process.env.DURABLE_PREPARED_STATEMENTS;
    }
    expect(await preparedOf(off.db)).toEqual([]);
    expect((await preparedOf(on.db)).length).toBeGreaterThanOrEqual(HOT.length);
  });

  it("a Kysely the app built itself keeps working, its statements unnamed", async () => {
    const url = await createTestDatabase("durable_prepared_own");
    const db = new Kysely<any>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
    });
    const durable = createDurable({ db, workflows: [threeSteps, sleeper], preparedStatements: true });
    opened.push(durable, db);
    await durable.migrate();
    await drain(durable);
    expect(await preparedOf(db)).toEqual([]);
  });

  it("a value the driver cannot send fails that send alone; the connection sends that text unnamed after", async () => {
    const url = await createTestDatabase("durable_prepared_unsendable");
    const { db, durable } = await drainOn(url, { driver: "pg" });
    opened.push(durable, db);
    await durable.start(sleeper, {}, { id: "unsendable" });
    const heartbeat = "select durable_heartbeat($1, $2::bigint) as state";
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const unsendable of [{ n: 1n }, cyclic]) {
      await expect(sql`select durable_heartbeat(${unsendable}, ${1}::bigint) as state`.execute(db)).rejects.toThrow();
      const { rows } = await sql<{
        state: string;
      }>`select durable_heartbeat(${"unsendable"}, ${1}::bigint) as state`.execute(db);
      expect(rows).toEqual([{ state: "pending" }]);
    }
    // pg closed the statement on the server when the values failed; it is not sent by name again.
    expect((await preparedOf(db)).filter((p) => p.statement === heartbeat)).toEqual([]);
  });

  it("a function replaced with another result type (a migration) fails one send, then goes unnamed", async () => {
    const url = await createTestDatabase("durable_prepared_replaced");
    const db = await connect(url, { driver: "pg", poolSize: 1 });
    const other = await connect(url, { driver: "pg", poolSize: 1 });
    opened.push(db, other);
    const probe = () => sql<{ v: unknown }>`select durable_probe_version(${1}::int) as v`.execute(db);
    await sql`create function durable_probe_version(int) returns int language sql as 'select $1'`.execute(other);
    expect((await probe()).rows).toEqual([{ v: 1 }]);
    await sql`drop function durable_probe_version(int)`.execute(other);
    await sql`create function durable_probe_version(int) returns text language sql as 'select ''v'' || $1'`.execute(
      other,
    );
    await expect(probe()).rejects.toThrow(/cached plan must not change result type/);
    expect((await probe()).rows).toEqual([{ v: "v1" }]);
  });
});

describe("on Neon's driver, over its WebSocket", () => {
  it("the hot statements are named, parsed once per connection and executed at every send", async () => {
    proxy = await startNeonProxy();
    configureNeonForLocalProxy(proxy.port);
    const { db, durable, sends } = await drainOn(await createTestDatabase("durable_prepared_neon"), { driver: "neon" });
    opened.push(durable, db);
    expect(proxy.connections).toBeGreaterThan(0);
    expectPlannedOnce(await preparedOf(db), sends);
  });

  it("createDurable({ preparedStatements: false }) sends every statement unnamed", async () => {
    const url = await createTestDatabase("durable_prepared_neon_off");
    const { db, durable } = await drainOn(url, { driver: "neon" }, { preparedStatements: false });
    opened.push(durable, db);
    expect(await preparedOf(db)).toEqual([]);
  });
});

describe("the switch", () => {
  it("DURABLE_PREPARED_STATEMENTS reads true/false, 1/0, on/off, yes/no; unset is on; anything else is refused", () => {
    for (const v of [undefined, "", "true", "1", "ON", " yes "]) expect(preparedStatementsFromEnv(v)).toBe(true);
    for (const v of ["false", "0", "off", "No"]) expect(preparedStatementsFromEnv(v)).toBe(false);
    expect(() => preparedStatementsFromEnv("flase")).toThrow(/DURABLE_PREPARED_STATEMENTS is "true" or "false"/);
  });

  it("createDurable refuses a preparedStatements that is not a boolean, whatever it is", () => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) });
    for (const value of ["false", 0, null, Object.create(null), Symbol("x"), 1n]) {
      expect(() => createDurable({ db, workflows: [threeSteps], preparedStatements: value as never })).toThrow(
        InvalidInputError,
      );
    }
  });

  it("names only fixed texts: durable function calls and texts marked planned once", () => {
    expect(statementNameOf("\n  select durable_record_step($1, $2::bigint, $3::jsonb) as recorded")).toMatch(
      /^durable_ps_[0-9a-f]{16}$/,
    );
    expect(statementNameOf("/* planned once */\nselect 1")).toBeDefined();
    expect(statementNameOf('select * from "durable_runs" where "id" in ($1, $2)')).toBeUndefined();
    expect(statementNameOf("begin")).toBeUndefined();
    expect(statementNameOf("select durable_now();")).toBeDefined();
    expect(statementNameOf("select durable_now(); select 1")).toBeUndefined();
  });
});
