import { sql } from "kysely";
import { expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { migrate } from "@/lib/durable/store/migrate";
import { migrations } from "@/lib/durable/store/migrations.generated";
import { createTestDatabase } from "../helpers/databases";

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
    } finally {
      await a.destroy();
      await b.destroy();
    }
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
