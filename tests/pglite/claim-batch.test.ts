// Batched claims on PGlite (docs/decisions.md, "Batched claims"): a tick with more than one loop
// claims its first runs in one statement, a worker's woken loop claims for every idle loop at once
// and hands each its run, and no run is claimed for a loop that is not free to advance it.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const statements: string[] = [];
const executions = new Map<string, number>();
const gate = { open: true, waiters: [] as (() => void)[], entered: 0 };
const pass = () => (gate.open ? Promise.resolve() : new Promise<void>((resolve) => gate.waiters.push(resolve)));

const gated = defineWorkflow({
  name: "batch-gated",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("work", async () => {
      gate.entered++;
      executions.set(ctx.runId, (executions.get(ctx.runId) ?? 0) + 1);
      await pass();
    });
    return "done";
  },
});

const batches = () => statements.filter((q) => /durable_claim_runs\(/.test(q)).length;
const singles = () => statements.filter((q) => /durable_claim_run\(/.test(q)).length;
const chained = () => statements.filter((q) => /durable_finish_and_claim\(/.test(q)).length;

let db: Kysely<any>;
let durable: Durable;
beforeAll(async () => {
  db = await connect("memory://", { onQuery: (q) => statements.push(q) });
  durable = createDurable({ db, workflows: [gated] });
  await durable.migrate();
});
afterAll(async () => {
  await durable?.close();
});
beforeEach(async () => {
  await resetDurableTables(db);
  executions.clear();
  Object.assign(gate, { open: true, waiters: [], entered: 0 });
});

const leaseMs = async (id: string) =>
  (
    await sql<{ ms: number }>`select (extract(epoch from lease_until - first_claimed_at) * 1000)::int as ms
      from durable_runs where id = ${id}`.execute(db)
  ).rows[0]!.ms;

describe("a tick with more than one loop", () => {
  it("claims its loops' first runs in one statement; each completion chains its loop's next claim", async () => {
    await durable.startMany(
      gated,
      Array.from({ length: 5 }, () => ({})),
    );
    statements.length = 0;
    expect(await durable.tick({ concurrency: 3, budgetMs: 40_000 })).toMatchObject({ claimed: 5, completed: 5 });
    expect(batches()).toBe(1);
    expect(singles()).toBe(0);
    expect(chained()).toBe(5);
  });

  it("a loop the batch found no run for ends without a claim of its own", async () => {
    await durable.startMany(gated, [{}, {}]);
    statements.length = 0;
    expect(await durable.tick({ concurrency: 4, budgetMs: 40_000 })).toMatchObject({ claimed: 2, completed: 2 });
    expect([batches(), singles(), chained()]).toEqual([1, 0, 2]);
  });

  it("a run claimed in a batch gets the lease a single claim of the same tick would (rule 11a)", async () => {
    gate.open = false;
    await durable.start(gated, {}, { id: "alone" });
    const single = durable.tick({ concurrency: 1, budgetMs: 40_000 });
    await until(() => gate.entered === 1);
    await durable.start(gated, {}, { id: "batched" });
    const batch = durable.tick({ concurrency: 2, budgetMs: 40_000 });
    await until(() => gate.entered === 2);
    const [alone, batched] = [await leaseMs("alone"), await leaseMs("batched")];
    // Both cover the 40 s budget plus the margin, measured from the claim.
    expect(alone).toBeGreaterThan(40_000);
    expect(Math.abs(batched - alone)).toBeLessThan(2_000);
    gate.open = true;
    for (const wake of gate.waiters.splice(0)) wake();
    await Promise.all([single, batch]);
  });
});

describe("worker mode", () => {
  it("a woken loop claims for every idle loop in one statement; no run is claimed for a busy loop", async () => {
    gate.open = false;
    const stop = new AbortController();
    statements.length = 0;
    const working = durable.work({ concurrency: 4, signal: stop.signal, pollMs: 60_000 });
    try {
      // Each loop's first claim finds nothing: the loops go idle.
      await until(() => singles() + batches() >= 4);
      const before = batches();
      await durable.startMany(
        gated,
        Array.from({ length: 6 }, () => ({})),
      );
      await until(() => gate.entered === 4);
      // At least one batch claimed for the idle loops; no run waits in memory for a loop: the runs
      // claimed are exactly the 4 being advanced.
      expect(batches()).toBeGreaterThan(before);
      const running = await sql<{ n: number }>`
        select count(*)::int as n from durable_runs where status = 'running'`.execute(db);
      expect(running.rows[0]!.n).toBe(4);
      gate.open = true;
      for (const wake of gate.waiters.splice(0)) wake();
      await until(async () => (await durable.countDue()) === 0 && executions.size === 6 && gate.entered === 6);
      await until(async () => {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from durable_runs where status = 'completed'`.execute(db);
        return rows[0]!.n === 6;
      });
    } finally {
      gate.open = true;
      for (const wake of gate.waiters.splice(0)) wake();
      stop.abort();
    }
    const report = await working;
    expect(report).toMatchObject({ claimed: 6, completed: 6 });
    expect([...executions.values()]).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
