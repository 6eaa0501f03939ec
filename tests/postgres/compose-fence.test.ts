// Child inserts against cancels and takeovers on the real server, with each interleaving forced
// (docs/sql.md, "Child runs" and "Lock order"). A `ctx.step.start` inserts its child only under
// the parent's current fence, in the statement that records the step; a cascading cancel that
// waits on one child's row still cancels a child (or grandchild) inserted meanwhile, or that
// insert finds the cancel and inserts nothing. Either way no run ever runs under a cancelled parent.
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

/** How often each run's `work` body ran. */
const effects = new Map<string, number>();

/** A gate a body awaits between two steps, so the test can act exactly there. */
interface Gate {
  reached: boolean;
  open: () => void;
  opened: Promise<void>;
}
const gates = new Map<string, Gate>();
function gateFor(runId: string): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const gate = { reached: false, open, opened };
  gates.set(runId, gate);
  return gate;
}
/** In a body: waits at the run's gate, if the test set one (later executions pass at once). */
async function atGate(runId: string): Promise<void> {
  const gate = gates.get(runId);
  if (!gate) return;
  gate.reached = true;
  await gate.opened;
}

const kid = defineWorkflow({
  name: "cf-kid",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("work", () => effects.set(ctx.runId, (effects.get(ctx.runId) ?? 0) + 1));
    return "done";
  },
});

/** Starts a child after the gate, then waits for a signal that never comes. */
const startsLate = defineWorkflow({
  name: "cf-starts-late",
  input: z.object({}),
  async run(ctx) {
    await atGate(ctx.runId);
    await ctx.step.start("kid", kid, {});
    await ctx.step.waitForSignal("never");
  },
});

/** The same workflow as a second deployment runs it: it waits for the signal at once. */
const startsLateElsewhere = defineWorkflow({
  name: "cf-starts-late",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.waitForSignal("never");
  },
});

/** Starts child "a", then after the gate invokes child "b". */
const invokesAfter = defineWorkflow({
  name: "cf-invokes-after",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.start("a", kid, {});
    await atGate(ctx.runId);
    await ctx.step.invoke("b", kid, {});
  },
});

/** Starts child "a", then after the gate starts child "b", then waits. */
const startsAfter = defineWorkflow({
  name: "cf-starts-after",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.start("a", kid, {});
    await atGate(ctx.runId);
    await ctx.step.start("b", kid, {});
    await ctx.step.waitForSignal("never");
  },
});

/** A child that, after the gate, invokes a grandchild "g". */
const gatedInvoker = defineWorkflow({
  name: "cf-gated-invoker",
  input: z.object({}),
  async run(ctx) {
    await atGate(ctx.runId);
    await ctx.step.invoke("g", kid, {});
  },
});

/** Starts child "a" and child "c" (a gated invoker), then waits. */
const tree = defineWorkflow({
  name: "cf-tree",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.start("a", kid, {});
    await ctx.step.start("c", gatedInvoker, {});
    await ctx.step.waitForSignal("never");
  },
});

const workflows = [kid, startsLate, invokesAfter, startsAfter, gatedInvoker, tree];
let url: string;
let admin: Kysely<any>;
let durable: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_compose_fence");
  admin = await connect(url, { driver: "pg" });
  durable = createDurable({
    db: await connect(url, { driver: "pg" }),
    workflows,
    secrets: { durable: "t" },
    // A tick of drain()'s 10 s budget claims only runs whose default lease (plus the margin) fits.
    defaults: { lease: "2s" },
  });
  await durable.migrate();
});
beforeEach(async () => {
  await resetDurableTables(admin);
  effects.clear();
  gates.clear();
});
afterAll(async () => {
  await durable?.close();
  await admin?.destroy();
});

const runRow = async (id: string) =>
  (
    await sql<{
      status: string;
      parent_id: string | null;
    }>`select status, parent_id from durable_runs where id = ${id}`.execute(admin)
  ).rows[0];
/** Runs below `id` (any depth) that have not ended. */
const openDescendants = async (id: string) =>
  (
    await sql<{ id: string; status: string }>`
      with recursive tree as (
        select id, status from durable_runs where parent_id = ${id}
        union all
        select r.id, r.status from durable_runs r join tree t on r.parent_id = t.id)
      select id, status from tree where status in ('pending', 'running', 'waiting') order by id`.execute(admin)
  ).rows;
/** Backends of this database waiting for a lock (a row's, an advisory one). */
const lockWaiters = async () =>
  (
    await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock'`.execute(admin)
  ).rows[0]!.n;
/** Takes every run that is due until none is: what any tick would do next. */
const drain = async () => {
  for (let i = 0; i < 20 && (await durable.countDue()) > 0; i++) await durable.tick({ budgetMs: 10_000 });
  expect(await durable.countDue()).toBe(0);
};

describe("ctx.step.start inserts its child only under the parent's current fence", () => {
  it("a parent cancelled just before the start inserts no child", async () => {
    const gate = gateFor("late-cancelled");
    await durable.start(startsLate, {}, { id: "late-cancelled" });
    const advanced = durable.advance("late-cancelled");
    await until(() => gate.reached);
    expect(await durable.cancel("late-cancelled", "stop")).toMatchObject({ status: "cancelled" });
    gate.open();
    await advanced;
    await drain();
    expect(effects.get("late-cancelled/kid")).toBeUndefined();
    expect(await runRow("late-cancelled/kid")).toBeUndefined();
  });

  it("a parent taken over by another owner just before the start inserts no child", async () => {
    const gate = gateFor("late-taken");
    await durable.start(startsLate, {}, { id: "late-taken" });
    const advanced = durable.advance("late-taken", { budgetMs: 20_000 });
    await until(() => gate.reached);
    // The first owner's lease runs out; a second deployment claims the run and parks it on its
    // signal, having started nothing.
    await durable.testing.advanceClock("1m");
    const other = createDurable({
      db: await connect(url, { driver: "pg", poolSize: 2 }),
      workflows: [kid, startsLateElsewhere],
      secrets: { durable: "t" },
    });
    try {
      expect(await other.advance("late-taken")).toBe("waiting");
    } finally {
      await other.close();
    }
    gate.open();
    await advanced;
    await drain();
    expect(effects.get("late-taken/kid")).toBeUndefined();
    expect(await runRow("late-taken/kid")).toBeUndefined();
    expect((await runRow("late-taken"))?.status).toBe("waiting");
  });
});

/**
 * Each case: the parent, and the run whose gate opens an insert (the parent, or a child that
 * inserts a grandchild) while a cancel of the parent waits on the row of child `parent/a`.
 */
const cases = [
  { name: "the parent's suspension invokes a child", workflow: invokesAfter, inserter: (p: string) => p, fresh: "b" },
  { name: "the parent's start starts a child", workflow: startsAfter, inserter: (p: string) => p, fresh: "b" },
  {
    name: "a child's suspension invokes a grandchild",
    workflow: tree,
    inserter: (p: string) => `${p}/c`,
    fresh: "c/g",
  },
];

describe("a cascading cancel that waits on one child's row", () => {
  for (const c of cases) {
    it(`cancels every descendant when meanwhile ${c.name}`, { timeout: 60_000 }, async () => {
      const parent = `cancel-${c.workflow.name}`;
      const inserter = c.inserter(parent);
      const gate = gateFor(inserter);
      await durable.start(c.workflow, {}, { id: parent });
      let advanced: Promise<unknown>;
      if (inserter === parent) {
        advanced = durable.advance(parent);
      } else {
        expect(await durable.advance(parent)).toBe("waiting");
        advanced = durable.advance(inserter);
      }
      await until(() => gate.reached);
      // A second connection holds child "a"'s row, as a claim or a receipt of it would.
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        await holder.query("begin");
        await holder.query("select 1 from durable_runs where id = $1 for update", [`${parent}/a`]);
        const cancelled = durable.cancel(parent, "stop");
        await until(async () => (await lockWaiters()) >= 1);
        // The insert runs now: either it commits while the cancel waits, or it waits for the cancel.
        gate.open();
        const fresh = `${parent}/${c.fresh}`;
        await until(async () => (await runRow(fresh)) !== undefined || (await lockWaiters()) >= 2);
        await holder.query("commit");
        expect(await cancelled).toMatchObject({ status: "cancelled" });
      } finally {
        await holder.end();
      }
      await advanced;
      await drain();
      expect([...effects.keys()]).toEqual([]);
      expect(await openDescendants(parent)).toEqual([]);
      expect((await runRow(parent))?.status).toBe("cancelled");
    });
  }
});
