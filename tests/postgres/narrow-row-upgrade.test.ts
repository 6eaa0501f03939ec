// Migration 0013 (docs/sql.md, "Migration 0013"): the value checks of durable_runs and durable_steps
// move from table CHECK constraints to domains. An app on 0012 upgrades with runs in flight (one
// pending, one sleeping, one waiting on a signal, one whose step is running while the migration
// runs) and every run reaches its end; after it, each write path still refuses every value the
// table's checks refused.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { migrate } from "@/lib/durable/store/migrate";
import { functionSet, migrations } from "@/lib/durable/store/migrations.generated";
import { createTestDatabase } from "../helpers/databases";
import { functionWriters } from "../helpers/shipped-migrations";

const BEFORE = migrations.filter((m) => Number(m.name.slice(0, 4)) <= 12);

let gateOpen: () => void = () => {};
const gate = new Promise<void>((resolve) => {
  gateOpen = resolve;
});
let gateReached: () => void = () => {};
const reached = new Promise<void>((resolve) => {
  gateReached = resolve;
});

const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    const a = await ctx.step.run("a", () => n + 1);
    const b = await ctx.step.run("b", () => a * 2);
    return ctx.step.run("c", () => b + 1);
  },
});
const sleeper = defineWorkflow({
  name: "sleeper",
  input: z.object({}),
  async run(ctx) {
    const before = await ctx.step.run("before", () => "slept");
    await ctx.step.sleep("nap", "1h");
    return ctx.step.run("after", () => `${before} an hour`);
  },
});
const waiter = defineWorkflow({
  name: "waiter",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("before", () => 1);
    const got = await ctx.step.waitForSignal<{ word: string }>("go", { timeout: "1d" });
    return ctx.step.run("after", () => got?.word ?? "timed out");
  },
});
const midStep = defineWorkflow({
  name: "mid-step",
  input: z.object({}),
  async run(ctx) {
    await ctx.setMetadata({ phase: "before" });
    return ctx.step.run("slow", async () => {
      gateReached();
      await gate;
      return "through the upgrade";
    });
  },
});

let db: Kysely<any>;
let durable: Durable;
beforeAll(async () => {
  db = await connect(await createTestDatabase("durable_narrow_upgrade"), { driver: "pg", poolSize: 4 });
  durable = createDurable({
    db,
    workflows: [threeSteps, sleeper, waiter, midStep],
    secrets: { durable: "test-secret" },
    defaults: { lease: "30s", budget: "60s" },
    log: () => {},
  });
});
afterAll(async () => {
  await durable?.close();
});

/** The number of CHECK constraints on `table`. */
async function tableChecks(table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_constraint where conrelid = ${table}::regclass and contype = 'c'`.execute(db);
  return rows[0]!.n;
}

it("runs in flight on 0012 finish after 0013; every write path still refuses an unstorable value", async () => {
  expect(await migrate(db, { migrations: BEFORE, functionSet })).toEqual(BEFORE.map((m) => m.name));
  expect(await tableChecks("durable_runs")).toBe(14);

  await durable.start(threeSteps, { n: 1 }, { id: "pending" });
  await durable.start(sleeper, {}, { id: "sleeping" });
  await durable.start(waiter, {}, { id: "waiting" });
  await durable.advance("sleeping", { budgetMs: 60_000 });
  await durable.advance("waiting", { budgetMs: 60_000 });
  expect((await durable.status("sleeping"))!).toMatchObject({ status: "waiting" });
  expect((await durable.status("waiting"))!).toMatchObject({ status: "waiting" });
  await durable.start(midStep, {}, { id: "mid-step", tags: ["upgrade"] });
  const running = durable.advance("mid-step", { budgetMs: 60_000 });
  await reached; // claimed, its step's effect under way: the receipt comes after the migration

  const writers = await functionWriters(db);
  // 0013, then the migrations since (0014 widens a domain's check, 0015 adds ctx.continueAsNew's columns).
  const applied = await migrate(db);
  expect(applied[0]).toBe("0013_narrow_hot_row");
  expect(applied).toEqual(migrations.filter((m) => !BEFORE.includes(m)).map((m) => m.name));
  // The same set, replaced in the migration's transaction so that every session compiles it again
  // against the new column types (its sessions of the claim failed every call otherwise), and not
  // recorded twice.
  const rewritten = await functionWriters(db);
  for (const fn of Object.keys(writers)) expect(rewritten[fn]).not.toBe(writers[fn]);
  const { rows: sets } = await sql<{ revision: number }>`select revision from durable_function_sets`.execute(db);
  expect(sets.map((row) => row.revision)).toEqual([functionSet.revision]);
  expect(await tableChecks("durable_runs")).toBe(1); // wake_at tied to the status: two columns
  expect(await tableChecks("durable_steps")).toBe(0);

  gateOpen();
  await running;
  await durable.signal({ runId: "waiting", name: "go", payload: { word: "after the upgrade" } });
  await durable.testing.advanceClock("2h");
  for (let i = 0; i < 20 && (await durable.countDue()) > 0; i++) await durable.tick({ budgetMs: 60_000 });

  expect(await durable.status("pending")).toMatchObject({ status: "completed", output: 5 });
  expect(await durable.status("sleeping")).toMatchObject({ status: "completed", output: "slept an hour" });
  expect(await durable.status("waiting")).toMatchObject({ status: "completed", output: "after the upgrade" });
  expect(await durable.status("mid-step")).toMatchObject({
    status: "completed",
    output: "through the upgrade",
    tags: ["upgrade"],
    metadata: { phase: "before" },
  });

  await expectEveryWritePathRefuses();
});

/** Each value a table check refused before 0013, sent straight to the SQL a write path runs. */
async function expectEveryWritePathRefuses(): Promise<void> {
  const long = "x".repeat(256);
  const refused = /violates check constraint "durable_(name|rate_key|run_status|run_tags|run_metadata|step_\w+)_check"/;
  const insertRun = (columns: string, values: string) =>
    sql.raw(
      `insert into durable_runs (id, workflow, input, wake_at${columns}) values ('bad', 'w', '{}', now()${values})`,
    );
  await insertRun("", "").execute(db); // the control: a storable row is written
  await sql`delete from durable_runs where id = 'bad'`.execute(db);
  for (const [column, value] of [
    ["concurrency_key", "''"],
    ["singleton_key", `'${long}'`],
    ["version", "''"],
    ["parent_id", "''"],
    ["rate_key", `'${long}'`],
    ["debounce_key", "''"],
    ["tags", "array['1','2','3','4','5','6','7','8','9','10','11']"],
    ["metadata", "'[]'"],
    ["forked_from", "''"],
    ["forked_from_step", `'${long}'`],
    ["status", "'finished'"],
  ]) {
    await expect(insertRun(`, ${column}`, `, ${value}`).execute(db)).rejects.toThrow(refused);
  }
  await expect(
    sql`insert into durable_runs (id, workflow, input, wake_at) values (${long}, 'w', '{}', now())`.execute(db),
  ).rejects.toThrow(refused);
  await expect(
    sql`insert into durable_runs (id, workflow, input, wake_at) values ('bad', '', '{}', now())`.execute(db),
  ).rejects.toThrow(refused);
  // An update sets a value the same way: the status, and the metadata a receipt merges in.
  await expect(sql`update durable_runs set status = 'done' where id = 'pending'`.execute(db)).rejects.toThrow(refused);
  await expect(
    sql`update durable_runs set metadata = metadata || '[1]' where id = 'pending'`.execute(db),
  ).rejects.toThrow(refused);
  // The tie of wake_at to the status stays a table check.
  await expect(sql`update durable_runs set wake_at = now() where id = 'pending'`.execute(db)).rejects.toThrow(
    /durable_runs_check/,
  );
  // The receipt, through its function, with a step id, a kind and a status no step may have.
  const { rows } = await sql<{
    fence: string;
  }>`select fence::text as fence from durable_runs where id = 'pending'`.execute(db);
  await sql`update durable_runs set status = 'running', wake_at = durable_now() + interval '1h',
                                 lease_until = durable_now() + interval '1h'
             where id = 'pending'`.execute(db);
  const step = (fields: Record<string, unknown>) =>
    sql`select durable_record_step('pending', ${rows[0]!.fence}::bigint, ${JSON.stringify({
      step_id: "z",
      seq: 9,
      kind: "run",
      status: "completed",
      attempt: 1,
      result: 1,
      ...fields,
    })}::jsonb)`.execute(db);
  await expect(step({ step_id: long })).rejects.toThrow(refused);
  await expect(step({ step_id: "" })).rejects.toThrow(refused);
  await expect(step({ kind: "walk" })).rejects.toThrow(refused);
  await expect(step({ status: "done" })).rejects.toThrow(refused);
  await expect(step({ metadata: [1] })).rejects.toThrow(refused);
  await step({}); // the control: a storable receipt is written
  // A fork's id, and a child's workflow inserted by a suspension.
  await expect(sql`select durable_fork_run('pending', ${long}, 'a', 60000)`.execute(db)).rejects.toThrow(refused);
  const waits = JSON.stringify([
    { step_id: "child", seq: 10, kind: "invoke", target_runs: ["kid"], start: { id: "kid", workflow: "", input: {} } },
  ]);
  await expect(
    sql`select durable_suspend_run('pending', ${rows[0]!.fence}::bigint, ${waits}::jsonb, '{}'::jsonb)`.execute(db),
  ).rejects.toThrow(refused);
}
