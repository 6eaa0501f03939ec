// prismaTx (lib/durable/prisma.ts, docs/guide/prisma.md), one suite run on each driver adapter:
// pglite-prisma-adapter on the store's own PGlite in process, @prisma/adapter-pg and Neon's
// (@prisma/adapter-neon, over a local WebSocket proxy) on the real server. The cases of
// tests/contract/drizzle-contract.ts, plus a retried body and the values JavaScript can hold. What
// only a server can show (a stale owner, racing owners, a SIGKILLed worker) runs when the harness
// offers a second owner and a worker process.
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, createDurable, defineWorkflow, type Durable, FatalStepError } from "@/lib/durable";
import { prismaTx } from "@/lib/durable/prisma";
import type { PrismaClient } from "../fixtures/prisma/generated/client";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";
import { createEffectTable, effectRows, prismaWorkflows, probe } from "./prisma-fixtures";

/** The durable store's handle and a Prisma client on the same database, each with its own pool. */
export interface PrismaSide {
  db: AnyKysely;
  prisma: PrismaClient;
  close(): Promise<void>;
}

export interface PrismaHarness {
  /** A fresh database (migrated by the suite). */
  open(): Promise<PrismaSide>;
  /** A Prisma client on another database: "bare" has no durable tables, "migrated" has them. */
  foreign(kind: "bare" | "migrated"): Promise<{ prisma: PrismaClient; close(): Promise<void> }>;
  /** On a server: a second owner on the same database, with pools of its own. */
  another?(): Promise<PrismaSide>;
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

export function runPrismaContract(label: string, harness: PrismaHarness) {
  describe(`prismaTx on ${label}`, () => {
    let side: PrismaSide;
    let durable: Durable;
    let wf: ReturnType<typeof prismaWorkflows>;
    let par: ReturnType<typeof parallel>;

    beforeAll(async () => {
      side = await harness.open();
      wf = prismaWorkflows(side.prisma);
      par = parallel(side.prisma);
      durable = createDurable({ db: side.db, workflows: [...wf.all, par], secrets, log: () => {} });
      await durable.migrate();
      await createEffectTable(side.prisma);
    });
    afterAll(async () => {
      await durable?.close();
      await side?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(side.db);
      await sql`truncate prisma_effects`.execute(side.db);
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
      const rows = await effectRows(side.prisma);
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
      expect(await effectRows(side.prisma)).toHaveLength(1);
    });

    it("rolls a failing body's effect back and records the failure", async () => {
      const { id } = await durable.start(wf.refusing, {}, { id: "refused" });
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, failed: 1 });
      expect(await effectRows(side.prisma)).toEqual([]);
      const status = (await durable.status(id))!;
      expect(status.steps[0]).toMatchObject({ id: "charge", kind: "tx", status: "failed" });
      expect(status.error?.message).toBe("card declined");
      expect(probe.calls.get(id)).toBe(1); // FatalStepError: not retried
    });

    it("retries a throwing body per its policy; only the attempt that commits leaves its effect", async () => {
      probe.failFirst = 2;
      const { id } = await durable.start(wf.flaky, {}, { id: "flaky" });
      await until(async () => {
        await durable.tick(BUDGET);
        return (await durable.status(id))!.status === "completed";
      });
      expect(probe.calls.get(id)).toBe(3);
      expect(await effectRows(side.prisma)).toMatchObject([{ runId: id, attempt: 3 }]);
      expect((await durable.status(id))!.output).toEqual({ attempt: 3 });
      const step = (await durable.status(id))!.steps[0]!;
      expect(step).toMatchObject({ id: "charge", status: "completed", attempt: 3 });
    });

    it("answers bigint, Date and undefined as their JSON, on the first execution as on replay", async () => {
      const { id } = await durable.start(wf.values, {}, { id: "values" });
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, completed: 1 });
      const [row] = await effectRows(side.prisma);
      expect(row).toMatchObject({ total: 9007199254740993n, createdAt: new Date("2026-01-02T03:04:05.678Z") });
      const output = (await durable.status(id))!.output as Record<string, unknown>;
      expect(output).toEqual({
        row: {
          id: row!.id,
          runId: id,
          step: "charge",
          attempt: 1,
          amount: 1,
          total: "9007199254740993",
          createdAt: "2026-01-02T03:04:05.678Z",
        },
        big: "-12",
        when: "1970-01-01T00:00:00.000Z",
        list: [null, "1"],
        total: "9007199254740993",
        createdAt: "2026-01-02T03:04:05.678Z",
      });
      expect("gone" in output).toBe(false);
      // The receipt holds the same JSON the first execution answered.
      const stored = await sql<{ result: unknown }>`
        select result from durable_steps where run_id = ${id} and step_id = 'charge'`.execute(side.db);
      expect(stored.rows[0]!.result).toEqual({
        row: output.row,
        big: "-12",
        when: "1970-01-01T00:00:00.000Z",
        list: [null, "1"],
      });
    });

    it("a Kysely tx step and a Prisma tx step in parallel commit independently", async () => {
      const { id } = await durable.start(par, {}, { id: "parallel" });
      expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, completed: 1 });
      expect((await effectRows(side.prisma)).map((r) => r.step)).toEqual(["kysely"]);
      const status = (await durable.status(id))!;
      expect(status.output).toEqual({ kysely: "fulfilled", prisma: "rejected" });
      const steps = status.steps.map((s) => [s.id, s.status]);
      expect(steps.sort()).toEqual([
        ["kysely", "completed"],
        ["prisma", "failed"],
      ]);
    });

    for (const kind of ["bare", "migrated"] as const) {
      it(`refuses a Prisma client on another database (${kind}) before the body, writing nothing`, async () => {
        const foreign = await harness.foreign(kind);
        try {
          await createEffectTable(foreign.prisma);
          const misplaced = prismaWorkflows(foreign.prisma);
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
          expect(await effectRows(foreign.prisma)).toEqual([]);
          expect(await effectRows(side.prisma)).toEqual([]);
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
          workflows: prismaWorkflows(second.prisma).all,
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
          expect(await effectRows(side.prisma)).toMatchObject([{ runId: id, attempt: 2, amount: 7 }]);
          expect((await durable.status(id))!.output).toMatchObject({ attempt: 2, isReclaim: true });
          expect(probe.calls.get(id)).toBe(2);
          expect(await receipts(id)).toHaveLength(1);
          // The stale owner's tick ends as soon as its write is refused; its transaction's rollback
          // and the note of the refusal come right after.
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
            : createDurable({ db: s.db, workflows: prismaWorkflows(s.prisma).all, secrets, log: () => {} }),
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
          const rows = await effectRows(side.prisma);
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
          expect(await effectRows(side.prisma)).toEqual([]);
          expect(await receipts(id)).toEqual([]);
          await durable.testing.advanceClock("42s");
          expect(await durable.tick(BUDGET)).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
          expect(await effectRows(side.prisma)).toMatchObject([{ runId: id, attempt: 2, amount: 3 }]);
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

// The Kysely-beside-Prisma test's workflow, on the suite's Prisma client.
let kyselyBodyRan = false;
let prismaBodyRan = false;

function parallel(prisma: PrismaClient) {
  return defineWorkflow({
    name: "prisma-parallel",
    input: z.object({}),
    async run(ctx) {
      kyselyBodyRan = prismaBodyRan = false;
      const kysely = ctx.step.tx("kysely", async (tx) => {
        await sql`insert into prisma_effects (run_id, step, attempt, amount)
                  values (${ctx.runId}, 'kysely', 1, 1)`.execute(tx);
        kyselyBodyRan = true;
        // On one session the Prisma step must wait for this transaction; on a server it may run
        // beside it. Either way its rollback must not touch this step's insert.
        await until(() => prismaBodyRan, 500).catch(() => {});
        return "kept";
      });
      // The Prisma step starts once the Kysely step's transaction is open.
      await until(() => kyselyBodyRan);
      const viaPrisma = prismaTx(ctx, "prisma", prisma, async (tx) => {
        prismaBodyRan = true;
        await tx.effect.create({ data: { runId: ctx.runId, step: "prisma", attempt: 1, amount: 2 } });
        throw new FatalStepError("rolled back");
      });
      const [k, p] = await Promise.allSettled([kysely, viaPrisma]);
      return { kysely: k.status, prisma: p.status };
    },
  });
}
