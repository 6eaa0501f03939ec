// drizzleTx (lib/durable/drizzle.ts, docs/guide/drizzle.md), one suite run on every driver:
// Drizzle's PGlite driver in process, node-postgres and Neon's serverless driver on the real
// server. What only a server can show (a stale owner, racing owners, a SIGKILLed worker) runs
// when the harness offers a second owner and a worker process.
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, createDurable, defineWorkflow, type Durable, FatalStepError } from "@/lib/durable";
import { drizzleTx } from "@/lib/durable/drizzle";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";
import { createEffectTable, drizzleWorkflows, effectRows, effects, probe, type TestDrizzle } from "./drizzle-fixtures";

/** The durable store's handle and a Drizzle db on the same database, each with its own pool. */
export interface DrizzleSide {
  db: AnyKysely;
  drizzle: TestDrizzle;
  close(): Promise<void>;
}

export interface DrizzleHarness {
  /** A fresh database (migrated by the suite). */
  open(): Promise<DrizzleSide>;
  /** A Drizzle db on another database: "bare" has no durable tables, "migrated" has them. */
  foreign(kind: "bare" | "migrated"): Promise<{ drizzle: TestDrizzle; close(): Promise<void> } | null>;
  /** On a server: a second owner on the same database, with pools of its own. */
  another?(): Promise<DrizzleSide>;
  /** On a server: a worker process that ticks and is SIGKILLed at `point` (once it said so). */
  killWorkerAt?(point: "inside-tx" | "tx.after-receipt"): Promise<void>;
}

const secrets = { durable: "t" };
const BUDGET = { budgetMs: 40_000 };

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return { open, opened, reach, reached };
}

export function runDrizzleContract(label: string, harness: DrizzleHarness) {
  describe(`drizzleTx on ${label}`, () => {
    let side: DrizzleSide;
    let durable: Durable;
    let wf: ReturnType<typeof drizzleWorkflows>;
    let par: ReturnType<typeof parallel>;

    beforeAll(async () => {
      side = await harness.open();
      wf = drizzleWorkflows(side.drizzle);
      par = parallel(side.drizzle);
      durable = createDurable({ db: side.db, workflows: [...wf.all, par], secrets, log: () => {} });
      await durable.migrate();
      await createEffectTable(side.drizzle);
    });
    afterAll(async () => {
      await durable?.close();
      await side?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(side.db);
      await sql`truncate drizzle_effects`.execute(side.db);
      probe.reset();
    });

    const receipts = async (runId: string) =>
      (
        await sql<{ status: string; external_key: string | null }>`
          select status, external_key from durable_steps where run_id = ${runId} and step_id = 'charge'`.execute(
          side.db,
        )
      ).rows;

    it("commits the effect with its receipt, once; a replay answers from the receipt, not the body", async () => {
      const { id } = await durable.start(wf.order, { amount: 5, pause: true }, { id: "happy" });
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, waiting: 1 });
      const rows = await effectRows(side.drizzle);
      expect(rows).toMatchObject([{ runId: id, step: "charge", attempt: 1, amount: 5 }]);
      expect(await receipts(id)).toEqual([{ status: "completed", external_key: expect.stringMatching(/^wfe-/) }]);

      await durable.testing.advanceClock("2h");
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, completed: 1 });
      expect(probe.calls.get(id)).toBe(1); // the replay read the receipt
      expect((await durable.status(id))!.output).toEqual({
        id: rows[0]!.id,
        attempt: 1,
        isReclaim: false,
        at: "1970-01-01T00:00:00.000Z",
      });
      expect(await effectRows(side.drizzle)).toHaveLength(1);
    });

    it("rolls a failing body's effect back and records the failure", async () => {
      const { id } = await durable.start(wf.refusing, {}, { id: "refused" });
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, failed: 1 });
      expect(await effectRows(side.drizzle)).toEqual([]);
      const status = (await durable.status(id))!;
      expect(status.steps[0]).toMatchObject({ id: "charge", kind: "tx", status: "failed" });
      expect(status.error?.message).toBe("card declined");
    });

    it("a Kysely tx step and a Drizzle tx step in parallel commit independently", async () => {
      // The Kysely step gives the Drizzle step time to interleave (it must not, on PGlite's one
      // session), then commits; the Drizzle step inserts and rolls back.
      const { id } = await durable.start(par, {}, { id: "parallel" });
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, completed: 1 });
      expect((await effectRows(side.drizzle)).map((r) => r.step)).toEqual(["kysely"]);
      const status = (await durable.status(id))!;
      expect(status.output).toEqual({ kysely: "fulfilled", drizzle: "rejected" });
      const steps = status.steps.map((s) => [s.id, s.status]);
      expect(steps.sort()).toEqual([
        ["drizzle", "failed"],
        ["kysely", "completed"],
      ]);
    });

    for (const kind of ["bare", "migrated"] as const) {
      it(`refuses a Drizzle db on another database (${kind}) before the body, writing nothing`, async () => {
        const foreign = await harness.foreign(kind);
        if (!foreign) return;
        try {
          await createEffectTable(foreign.drizzle);
          const misplaced = drizzleWorkflows(foreign.drizzle);
          const other = createDurable({ db: side.db, workflows: misplaced.all, secrets, log: () => {} });
          const { id } = await other.start(misplaced.order, { amount: 9 }, { id: `foreign-${kind}` });
          expect(await other.tick(BUDGET)).toMatchObject({ claimed: 1, failed: 1 });
          const status = (await other.status(id))!;
          expect(status.error).toMatchObject({ code: "invalid_input" });
          expect(status.error?.message).toContain("must be on the durable store's database");
          expect(status.error?.message).toContain(
            kind === "bare" ? "the durable tables are not reachable" : `run "${id}" is not in that database`,
          );
          expect(probe.calls.get(id)).toBeUndefined();
          expect(await effectRows(foreign.drizzle)).toEqual([]);
          expect(await effectRows(side.drizzle)).toEqual([]);
        } finally {
          await foreign.close();
        }
      });
    }

    const { another, killWorkerAt } = harness;
    if (another) {
      it("a stale owner's transaction rolls back; its successor's effect is the one that commits", async () => {
        const second = await another();
        const durableB = createDurable({
          db: second.db,
          workflows: drizzleWorkflows(second.drizzle).all,
          secrets,
          log: () => {},
        });
        try {
          const a = gate();
          const b = gate();
          probe.inside = (_runId, s) => {
            const g = s.attempt === 1 ? a : b;
            g.reach();
            return g.opened;
          };
          const { id } = await durable.start(wf.order, { amount: 7 }, { id: "stale" });
          const ticking = durable.tick(BUDGET);
          await a.reached; // the first owner's effect is written, uncommitted
          await durable.testing.advanceClock("42s"); // past its lease (40 s budget + 1 s margin)
          const ticking2 = durableB.tick(BUDGET);
          await b.reached; // the second owner's too: both bodies are inside their transactions
          a.open();
          b.open();
          const [reportA, reportB] = await Promise.all([ticking, ticking2]);
          expect(reportA).toMatchObject({ claimed: 1, completed: 0 });
          expect(reportB).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
          expect(await effectRows(side.drizzle)).toMatchObject([{ runId: id, attempt: 2, amount: 7 }]);
          expect((await durable.status(id))!.output).toMatchObject({ attempt: 2, isReclaim: true });
          expect(probe.calls.get(id)).toBe(2);
          expect(await receipts(id)).toHaveLength(1);
          // The stale owner's tick ends as soon as its write is refused ("lost" waits for nothing);
          // its transaction's rollback and the note of the refusal come right after.
          const rejections = async () =>
            (
              await sql<{ n: number }>`
                select count(*)::int as n from durable_events
                 where run_id = ${id} and kind = 'fence.rejected'`.execute(side.db)
            ).rows[0]!.n;
          await until(async () => (await rejections()) > 0);
          expect(await rejections()).toBe(1);
        } finally {
          await durableB.close();
          await second.close();
        }
      });

      it("owners racing over many runs write each effect once", async () => {
        const RUNS = 40;
        const sides = [side, ...(await Promise.all([another(), another(), another()]))];
        const owners = sides.map((s, i) =>
          i === 0
            ? durable
            : createDurable({ db: s.db, workflows: drizzleWorkflows(s.drizzle).all, secrets, log: () => {} }),
        );
        try {
          for (let i = 0; i < RUNS; i++) await durable.start(wf.order, { amount: i }, { id: `race-${i}` });
          const claimed = await Promise.all(
            owners.map(async (owner) => {
              let n = 0;
              for (;;) {
                const report = await owner.tick(BUDGET);
                n += report.claimed;
                if (report.claimed === 0) return n;
              }
            }),
          );
          expect(claimed.reduce((x, y) => x + y, 0)).toBe(RUNS);
          expect(claimed.filter((n) => n > 0).length).toBeGreaterThan(1);
          const rows = await effectRows(side.drizzle);
          expect(rows).toHaveLength(RUNS);
          expect(new Set(rows.map((r) => r.runId)).size).toBe(RUNS);
          for (let i = 0; i < RUNS; i++) expect(probe.calls.get(`race-${i}`)).toBe(1);
          const done = await sql<{ n: number }>`
            select count(*)::int as n from durable_runs where status = 'completed'`.execute(side.db);
          expect(done.rows[0]!.n).toBe(RUNS);
        } finally {
          await Promise.all(owners.slice(1).map((o) => o.close()));
          await Promise.all(sides.slice(1).map((s) => s.close()));
        }
      });
    }

    if (killWorkerAt) {
      for (const point of ["inside-tx", "tx.after-receipt"] as const) {
        const where = point === "inside-tx" ? "inside the body" : "after the receipt, before the commit";
        it(`a worker SIGKILLed ${where} leaves neither effect nor receipt; the next owner runs it once`, async () => {
          const { id } = await durable.start(wf.order, { amount: 3 }, { id: `killed-${point}` });
          await killWorkerAt(point);
          expect((await durable.status(id))!.status).toBe("running");
          expect(await effectRows(side.drizzle)).toEqual([]);
          expect(await receipts(id)).toEqual([]);
          await durable.testing.advanceClock("42s");
          expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
          expect(await effectRows(side.drizzle)).toMatchObject([{ runId: id, attempt: 2, amount: 3 }]);
          expect((await durable.status(id))!.output).toMatchObject({ attempt: 2, isReclaim: true });
          expect(await receipts(id)).toHaveLength(1);
          // The killed backend's transaction is gone, not left idle in transaction.
          await until(async () => {
            const idle = await sql<{ n: number }>`
              select count(*)::int as n from pg_stat_activity
               where datname = current_database() and state like 'idle in transaction%'`.execute(side.db);
            return idle.rows[0]!.n === 0;
          });
        });
      }
    }
  });
}

// The Kysely-beside-Drizzle test's workflow, on the suite's Drizzle db.
let kyselyBodyRan = false;
let drizzleBodyRan = false;

function parallel(db: TestDrizzle) {
  return defineWorkflow({
    name: "drizzle-parallel",
    input: z.object({}),
    async run(ctx) {
      kyselyBodyRan = drizzleBodyRan = false;
      const kysely = ctx.step.tx("kysely", async (tx) => {
        await sql`insert into drizzle_effects (run_id, step, attempt, amount)
                  values (${ctx.runId}, 'kysely', 1, 1)`.execute(tx);
        kyselyBodyRan = true;
        // On one session the Drizzle step must wait for this transaction; on a server it may
        // run beside it. Either way its rollback must not touch this step's insert.
        await until(() => drizzleBodyRan, 500).catch(() => {});
        return "kept";
      });
      // The Drizzle step starts once the Kysely step's transaction is open.
      await until(() => kyselyBodyRan);
      const drizzle = drizzleTx(ctx, "drizzle", db, async (tx) => {
        drizzleBodyRan = true;
        await tx.insert(effects).values({ runId: ctx.runId, step: "drizzle", attempt: 1, amount: 2 });
        throw new FatalStepError("rolled back");
      });
      const [k, d] = await Promise.allSettled([kysely, drizzle]);
      return { kysely: k.status, drizzle: d.status };
    },
  });
}
