// A write after the claim's lease, by the database clock, is refused like a stale fence
// (docs/rules.md, rule 11a): the owner's process believes it is inside its budget (its own clock
// says so), but the database clock has passed lease_until and nobody has healed or claimed the
// run yet. Each of the owner's fenced writes is tried that way: a receipt, a tx step's receipt
// with its effect, the end with its held-back receipt, a suspension, a release, a stream append.
// None may land; a fence.rejected event notes it; the next claim takes the run as a lost claim
// and runs the step again as a reclaim (rules 7a and 14).
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const WRITES = ["receipt", "tx", "finish", "suspend", "release", "stream"] as const;

let durable: Durable;
// Runs whose lease the body has already ended once: the clock moves on the first pass only.
const moved = new Set<string>();
const seen: Array<{ runId: string; attempt: number; isReclaim: boolean }> = [];

/** Ends this owner's lease by the database clock, once per run, without anyone claiming it. */
async function endLease(runId: string): Promise<void> {
  if (moved.has(runId)) return;
  moved.add(runId);
  await durable.testing.advanceClock("10m");
}

const late = defineWorkflow({
  name: "late-writer",
  input: z.object({ write: z.enum(WRITES) }),
  async run(ctx, { write }) {
    const a = async (s: { attempt: number; isReclaim: boolean }) => {
      seen.push({ runId: ctx.runId, attempt: s.attempt, isReclaim: s.isReclaim });
      if (write === "stream") {
        await endLease(ctx.runId);
        const writer = ctx.stream("a");
        writer.write({ chunk: s.attempt });
        await writer.flush();
      } else if (write === "receipt" || write === "finish") {
        await endLease(ctx.runId);
      }
      return s.attempt;
    };
    if (write === "tx") {
      return ctx.step.tx("a", async (tx, s) => {
        await sql`insert into late_effects (run_id, attempt) values (${ctx.runId}, ${s.attempt})`.execute(tx);
        await endLease(ctx.runId);
        return s.attempt;
      });
    }
    if (write === "suspend" || write === "release") {
      // Between steps, outside any step: the body's next write is the suspension or the release.
      await endLease(ctx.runId);
      if (write === "suspend") await ctx.step.sleep("nap", "1h");
      // A lease the 3 s budget cannot fit (but the default budget can): the step gives the run back.
      else await ctx.step.run("big", async () => 1, { lease: "10s" });
      return 0;
    }
    const attempt = await ctx.step.run("a", a);
    // A second step makes the first receipt its own write (durable_record_step); without it, the
    // receipt is held back and rides on the end (durable_finish_run).
    if (write === "receipt") await ctx.step.run("b", async () => 0);
    return attempt;
  },
});

describe("a write after the claim's lease ended by the database clock (PostgreSQL)", () => {
  let db: Kysely<any>;

  beforeAll(async () => {
    db = await connect(await createTestDatabase("durable_late_writes"), { driver: "pg" });
    durable = createDurable({
      db,
      workflows: [late],
      defaults: { lease: "1s", margin: "300ms" },
      testing: true,
      log: () => {},
    });
    await durable.migrate();
    await sql`create table late_effects (run_id text not null, attempt int not null)`.execute(db);
  });
  afterAll(async () => {
    await durable?.close();
  });
  beforeEach(async () => {
    await resetDurableTables(db);
    await sql`truncate late_effects`.execute(db);
  });

  const rows = async (runId: string) => ({
    run: (
      await sql<{ status: string; fence: number; lost_claims: number }>`
        select status, fence::int as fence, lost_claims from durable_runs where id = ${runId}`.execute(db)
    ).rows[0],
    steps: (
      await sql<{ step_id: string; status: string }>`
        select step_id, status from durable_steps where run_id = ${runId} order by step_id`.execute(db)
    ).rows,
    events: (
      await sql<{ kind: string; fence: number }>`
        select kind, fence::int as fence from durable_events where run_id = ${runId} order by id`.execute(db)
    ).rows,
    chunks: Number(
      (
        await sql<{ n: number }>`select count(*)::int as n from durable_stream_chunks where run_id = ${runId}`.execute(
          db,
        )
      ).rows[0]!.n,
    ),
    effects: Number(
      (await sql<{ n: number }>`select count(*)::int as n from late_effects where run_id = ${runId}`.execute(db))
        .rows[0]!.n,
    ),
  });

  for (const write of WRITES) {
    it(`refuses the ${write} and writes nothing; the next claim takes the run over`, async () => {
      const id = `late-${write}`;
      await durable.start(late, { write }, { id });
      // advance(), not tick(): a tick would claim the run again at once, its lease being over.
      expect(await durable.advance(id, { budgetMs: 3_000 })).toBe("lost");
      // A tx step's refusal is noted once its transaction rolled back, which may be after advance() answered.
      await until(async () => (await rows(id)).events.length > 0);
      const after = await rows(id);
      // Still the first owner's claim, left to run out: no receipt, no effect, no chunk, no end.
      expect(after.run).toMatchObject({ status: "running", fence: 1 });
      expect(after.steps).toEqual([]);
      expect(after.effects).toBe(0);
      expect(after.chunks).toBe(0);
      expect(after.events).toEqual([{ kind: "fence.rejected", fence: 1 }]);

      // The clock is past the lease already: the next tick claims it as a lost claim.
      if (write === "suspend" || write === "release") {
        const next = await durable.tick({ budgetMs: 3_000 });
        expect(next).toMatchObject({ claimed: 1, ...(write === "suspend" ? { waiting: 1 } : { yielded: 1 }) });
        // Taken as a lost claim (a heal by the claim), then parked or given back by the new owner.
        expect((await rows(id)).events).toEqual([
          { kind: "fence.rejected", fence: 1 },
          { kind: "heal", fence: 2 },
          ...(write === "release" ? [{ kind: "budget.yield", fence: 2 }] : []),
        ]);
        return;
      }
      expect(await durable.tick({ budgetMs: 3_000 })).toMatchObject({ claimed: 1, completed: 1 });
      const done = await rows(id);
      expect(done.run).toMatchObject({ status: "completed", fence: 2 });
      expect(done.effects).toBe(write === "tx" ? 1 : 0);
      expect(done.chunks).toBe(write === "stream" ? 1 : 0);
      expect((await durable.status(id))!.output).toBe(2);
      if (write !== "tx") {
        expect(seen.filter((s) => s.runId === id)).toEqual([
          { runId: id, attempt: 1, isReclaim: false },
          { runId: id, attempt: 2, isReclaim: true },
        ]);
      }
    });
  }
});
