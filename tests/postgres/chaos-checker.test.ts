// A checker that cannot fail is no checker: break the code on purpose (in the database of the
// test: no fence, no unique receipt key, an app clock instead of the database clock) and show the
// matching invariant fire, while the unbroken code passes the same sequence.
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { claimDueRun } from "@/lib/durable/store";
import { connect, createDurable } from "@/lib/durable";
import { recordStep } from "@/lib/durable/store";
import { createChaosDatabase } from "@/scripts/chaos/harness-db";
import { checkInvariants } from "@/scripts/chaos/invariants";
import { chaosExpectation, chaosOrder, attachSink } from "@/scripts/chaos/workflow";

const open: Kysely<any>[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.destroy()));
});

async function chaosDb(name: string) {
  const { url, db } = await createChaosDatabase(name);
  open.push(db);
  return { url, db };
}

const violationsOf = async (db: Kysely<any>, id: string) =>
  (await checkInvariants(db, chaosExpectation)).find((inv) => inv.id === id)!.violations;

const deliverReceipt = {
  stepId: "deliver",
  seq: 0,
  kind: "run",
  status: "completed",
  attempt: 1,
  resultJson: "1",
} as const;

async function startOne(db: Kysely<any>, id: string) {
  const durable = createDurable({ db, workflows: [chaosOrder], secrets: { durable: "t" }, log: () => {} });
  await durable.start(chaosOrder, {}, { id });
}

describe("the chaos checker", () => {
  it("passes a clean run of the real engine", async () => {
    const { url, db } = await chaosDb("durable_chaos_checker_clean");
    const sink = new pg.Pool({ connectionString: url, max: 1 });
    attachSink(sink);
    const durable = createDurable({ db, workflows: [chaosOrder], secrets: { durable: "t" }, log: () => {} });
    for (let i = 0; i < 5; i++) await durable.start(chaosOrder, {}, { id: `clean-${i}` });
    expect(await durable.tick({ budgetMs: 40_000 })).toMatchObject({ completed: 5 });
    await sink.end();
    const results = await checkInvariants(db, chaosExpectation);
    expect(results.map((r) => r.id)).toEqual(["I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10"]);
    expect(results.flatMap((r) => r.violations)).toEqual([]);
  });

  for (const broken of [false, true]) {
    it(`${broken ? "fires I3 when the receipt write has no fence" : "keeps I3 quiet with the fence"}`, async () => {
      const { db } = await chaosDb(`durable_chaos_checker_fence_${broken}`);
      if (broken) {
        const fn = (
          await sql<{ src: string }>`select pg_get_functiondef('durable_record_step'::regproc) as src`.execute(db)
        ).rows[0]!.src;
        await sql
          .raw(
            fn.replaceAll(
              "where id = p_run_id and fence = p_fence and status is not distinct from 'running'",
              "where id = p_run_id",
            ),
          )
          .execute(db);
      }
      await startOne(db, "f1");
      const stale = (await claimDueRun(db, { workflows: ["chaos-order"], leaseMs: 200 }))!;
      await new Promise((r) => setTimeout(r, 300));
      const current = await claimDueRun(db, { workflows: ["chaos-order"], leaseMs: 30_000 });
      expect(current!.run.fence).toBe(stale.run.fence + 1);
      const late = await recordStep(db, "f1", stale.run.fence, deliverReceipt);
      expect(late.owned).toBe(broken);
      expect((await violationsOf(db, "I3")).length).toBe(broken ? 1 : 0);
    });

    it(`${broken ? "fires I1 without a unique receipt key" : "keeps I1 quiet with the key"}`, async () => {
      const { db } = await chaosDb(`durable_chaos_checker_key_${broken}`);
      if (broken) {
        await sql`alter table durable_steps drop constraint durable_steps_pkey`.execute(db);
        const fn = (
          await sql<{ src: string }>`select pg_get_functiondef('durable_write_receipt'::regproc) as src`.execute(db)
        ).rows[0]!.src;
        const start = fn.indexOf("  on conflict (run_id, step_id) do update set");
        const end = fn.indexOf("  returning * into v_step;");
        await sql.raw(fn.slice(0, start) + fn.slice(end)).execute(db);
      }
      await startOne(db, "k1");
      const owner = (await claimDueRun(db, { workflows: ["chaos-order"], leaseMs: 30_000 }))!;
      // The same receipt sent twice: an engine that re-sends a statement after an ambiguous error.
      await recordStep(db, "k1", owner.run.fence, deliverReceipt);
      await recordStep(db, "k1", owner.run.fence, deliverReceipt);
      expect((await violationsOf(db, "I1")).length).toBe(broken ? 1 : 0);
    });

    it(broken ? "fires I10 when leases come from app clocks" : "keeps I10 quiet with the database clock", async () => {
      const { url, db } = await chaosDb(`durable_chaos_checker_clock_${broken}`);
      if (broken) {
        // durable_now() reads the caller's (skewed) app clock, passed as a session setting.
        await sql
          .raw(`create or replace function durable_now() returns timestamptz language sql stable as $$
          select clock_timestamp() + coalesce(nullif(current_setting('chaos.app_skew', true), ''), '0')::interval $$`)
          .execute(db);
      }
      await startOne(db, "c1");
      const skewed = new URL(url);
      skewed.searchParams.set("options", "-c chaos.app_skew=10min");
      const ahead = await connect(skewed.toString(), { driver: "pg", poolSize: 1 });
      open.push(ahead);
      const first = await claimDueRun(db, { workflows: ["chaos-order"], leaseMs: 30_000 });
      expect(first).not.toBeNull();
      // A process whose clock runs 10 minutes ahead sees the live 30 s lease as long expired.
      const second = await claimDueRun(ahead, { workflows: ["chaos-order"], leaseMs: 30_000 });
      expect(second !== null).toBe(broken);
      expect((await violationsOf(db, "I10")).length).toBe(broken ? 1 : 0);
    });
  }
});
