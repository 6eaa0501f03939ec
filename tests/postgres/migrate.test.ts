import { type Kysely, sql } from "kysely";
import { expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { describeSchema } from "@/lib/durable/store/describe-schema";
import { migrate } from "@/lib/durable/store/migrate";
import { functionSet, migrations } from "@/lib/durable/store/migrations.generated";
import { createTestDatabase } from "../helpers/databases";
import { functionWriters, installShipped, SHIPPED } from "../helpers/shipped-migrations";

/** The revisions of the function set the database recorded, oldest first. */
async function recordedRevisions(db: Kysely<any>): Promise<number[]> {
  const { rows } = await sql<{ revision: number }>`
    select revision from durable_function_sets order by revision`.execute(db);
  return rows.map((row) => row.revision);
}

/** Every function written by one transaction: the set went in once. */
function writtenOnce(writers: Record<string, string>): void {
  expect(Object.keys(writers).length).toBeGreaterThan(20);
  expect(new Set(Object.values(writers)).size).toBe(1);
}

it("two cold starts migrating the same fresh database at once both succeed, and it is applied once", async () => {
  for (let round = 0; round < 3; round++) {
    const url = await createTestDatabase("durable_migrate_race");
    const a = await connect(url, { driver: "pg", poolSize: 1 });
    const b = await connect(url, { driver: "pg", poolSize: 1 });
    try {
      const results = await Promise.all([migrate(a), migrate(b)]);
      expect(results.map((r) => r.length).sort()).toEqual([0, migrations.length]);
      expect(await migrate(a)).toEqual([]);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from durable_migrations`.execute(a);
      expect(rows[0]!.n).toBe(migrations.length);
      const fn = await sql<{ now: Date }>`select durable_now() as now`.execute(b);
      expect(fn.rows[0]!.now).toBeInstanceOf(Date);
      expect(await recordedRevisions(a)).toEqual([functionSet.revision]);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  }
});

it("two deployments upgrading an app on 0006 at once apply the function set once", async () => {
  for (let round = 0; round < 3; round++) {
    const url = await createTestDatabase("durable_migrate_set_race");
    const a = await connect(url, { driver: "pg", poolSize: 1 });
    const b = await connect(url, { driver: "pg", poolSize: 1 });
    try {
      await installShipped(a);
      const before = await functionWriters(a);
      const results = await Promise.all([migrate(a), migrate(b)]);
      expect(results.map((r) => r.length).sort()).toEqual([0, migrations.length - SHIPPED.length]);
      expect(await recordedRevisions(b)).toEqual([functionSet.revision]);
      const after = await functionWriters(b);
      // Every function the shipped migrations made is still there (the set adds the newer ones).
      expect(Object.keys(after)).toEqual(expect.arrayContaining(Object.keys(before)));
      expect(Object.keys(after).length).toBeGreaterThan(Object.keys(before).length);
      writtenOnce(after);
      expect(Object.values(after)[0]).not.toBe(Object.values(before)[0]);
      // Equal revision: nothing is written again.
      expect(await migrate(b)).toEqual([]);
      expect(await functionWriters(a)).toEqual(after);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  }
});

it("an older deployment migrating after a newer one changes no function body; a newer set replaces them", async () => {
  const db = await connect(await createTestDatabase("durable_migrate_set_revisions"), { driver: "pg" });
  try {
    await migrate(db);
    const current = await describeSchema(db);
    const writers = await functionWriters(db);
    // A set with another body of durable_inline_limit, at a lower revision and then a higher one.
    const limit = functionSet.files.find((file) => file.name === "durable_inline_limit")!;
    const edited = { name: limit.name, sql: limit.sql.replace("select 65536", "select 1024") };
    expect(edited.sql).not.toEqual(limit.sql);
    const files = functionSet.files.map((file) => (file.name === limit.name ? edited : file));
    const sha256 = "0".repeat(64);
    const inlineLimit = async () =>
      (await sql<{ n: number }>`select durable_inline_limit() as n`.execute(db)).rows[0]!.n;

    const older = { migrations, functionSet: { revision: functionSet.revision - 1, sha256, files } };
    expect(await migrate(db, older)).toEqual([]);
    expect(await describeSchema(db)).toEqual(current);
    expect(await functionWriters(db)).toEqual(writers);
    expect(await inlineLimit()).toBe(65536);

    const newer = { migrations, functionSet: { revision: functionSet.revision + 1, sha256, files } };
    expect(await migrate(db, newer)).toEqual([]);
    expect(await inlineLimit()).toBe(1024);
    expect(await recordedRevisions(db)).toEqual([functionSet.revision, functionSet.revision + 1]);
    writtenOnce(await functionWriters(db));

    // This release after the newer one: the newer bodies stay.
    expect(await migrate(db)).toEqual([]);
    expect(await inlineLimit()).toBe(1024);
  } finally {
    await db.destroy();
  }
});

const approval = defineWorkflow({
  name: "approval",
  input: z.object({}),
  signals: { decision: z.object({ approved: z.boolean() }) },
  async run(ctx) {
    const first = await ctx.step.waitForSignal("decision");
    const second = await ctx.step.waitForSignal("decision", { id: "decision-2", timeout: "1h" });
    return { first: first?.approved, second: second?.approved ?? null };
  },
});

it("upgrades an app that applied 0001 with runs in flight: their waits and signals keep working", async () => {
  const db = await connect(await createTestDatabase("durable_migrate_upgrade"), { driver: "pg" });
  try {
    // The app as it was: 0001 only, a run parked on "decision", another whose signal landed early.
    await sql.raw(migrations[0]!.sql).execute(db);
    await sql`create table durable_migrations (name text primary key, applied_at timestamptz default now())`.execute(
      db,
    );
    await sql`insert into durable_migrations (name) values (${migrations[0]!.name})`.execute(db);
    for (const id of ["parked", "early"]) {
      const row = { id, workflow: "approval", input: "{}", wake_at: new Date() };
      await db.insertInto("durable_runs").values(row).execute();
    }
    const claimed = await sql<{ c: { run: { fence: number } } }>`
      select durable_claim_run('["approval"]', 'parked', 5000, '[]') as c`.execute(db);
    const wait = JSON.stringify([{ step_id: "decision", seq: 0, kind: "signal", deadline_in_ms: null }]);
    await sql`select durable_suspend_run('parked', ${claimed.rows[0]!.c.run.fence}::bigint, ${wait}::jsonb,
                '{"kind":"signal","name":"decision"}')`.execute(db);
    await sql`select durable_deliver_signal('early', 'decision', '{"approved":false}', 'evt-early')`.execute(db);

    const durable = createDurable({ db, workflows: [approval], defaults: { lease: "2s" } });
    expect(await durable.migrate()).toEqual(migrations.slice(1).map((m) => m.name));
    expect(await durable.signal({ runId: "parked", name: "decision", payload: { approved: true } })).toMatchObject({
      signalled: true,
    });
    // A repeat of the delivery id the old schema stored is still a repeat.
    expect(
      await durable.signal({ runId: "early", name: "decision", payload: { approved: true }, id: "evt-early" }),
    ).toMatchObject({ alreadyDelivered: true });
    await durable.signal({ runId: "parked", name: "decision", payload: { approved: false } });
    await durable.signal({ runId: "early", name: "decision", payload: { approved: true } });
    for (let i = 0; i < 3; i++) await durable.tick({ budgetMs: 10_000 });
    expect(await durable.status("parked")).toMatchObject({
      status: "completed",
      output: { first: true, second: false },
    });
    expect(await durable.status("early")).toMatchObject({
      status: "completed",
      output: { first: false, second: true },
    });
  } finally {
    await db.destroy();
  }
});
