// The claim under flow control, one suite on every database (docs/guide/flow-control.md,
// docs/sql.md "Flow control"): a rate-held backlog does not starve other runs, the priority walk
// visits only due runs, a changed limit releases what it held, a fork counts as a first start,
// and a debounced run's start never lands past its deadline or ttl. Racing claimers:
// tests/postgres/flow-control-racing.test.ts.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

const ran: string[] = [];

/** The workflow as a deployment defines it: `limit` starts an hour per key, or no rate limit. */
const limitedWith = (limit: number | null) =>
  defineWorkflow({
    name: "fcc-limited",
    input: z.object({ n: z.number() }),
    ...(limit === null ? {} : { rateLimit: { key: () => "partner", limit, period: "1h" } }),
    async run(ctx, input) {
      await ctx.step.run("call", () => input.n);
      ran.push(`limited:${input.n}`);
      return input.n;
    },
  });
/** One start an hour per key: the second run of the key waits an hour. */
const limited = limitedWith(1);

const other = defineWorkflow({
  name: "fcc-other",
  input: z.object({ n: z.number() }),
  async run(_ctx, input) {
    ran.push(`other:${input.n}`);
    return input.n;
  },
});

const sleeper = defineWorkflow({
  name: "fcc-sleeper",
  input: z.object({ p: z.number() }),
  priority: (input) => input.p,
  async run(ctx, input) {
    await ctx.step.sleep("nap", "1h");
    return input.p;
  },
});

const debounced = defineWorkflow({
  name: "fcc-debounced",
  input: z.object({ doc: z.string() }),
  debounce: { key: (input) => input.doc, period: "1m" },
  async run(_ctx, input) {
    return input.doc;
  },
});

const workflows = [limited, other, sleeper, debounced];

export function runFlowControlContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`the claim under flow control on ${label}`, () => {
    let db: Kysely<any>;
    let durable: Durable;
    /** Another deployment of the same workflows on the same database, its limit changed. */
    const redeploy = (limit: number | null) =>
      createDurable({ db, workflows: [limitedWith(limit), other, sleeper, debounced], secrets: { durable: "t" } });
    const rows = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(db)).rows;
    const pending = async (workflow: string) =>
      (
        await rows<{ n: number }>(
          sql`select count(*)::int as n from durable_runs where workflow = ${workflow} and status = 'pending'`,
        )
      )[0]!.n;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows, secrets: { durable: "t" } });
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      ran.length = 0;
    });

    it("a backlog of 40 rate-held runs in front does not starve a due run of another workflow", async () => {
      // One start each, so that each has a due time of its own: the order the claims meet them.
      for (let n = 0; n < 40; n++) await durable.start(limited, { n });
      await durable.start(other, { n: 1 });
      // One tick: the key's first run starts, its 39 others are held in one go, the other workflow's
      // run is claimed in the same tick (a claim that gave up after 20 held runs ended the tick).
      const report = await durable.tick();
      expect(report).toMatchObject({ claimed: 2, completed: 2 });
      expect(ran.sort()).toEqual(["limited:0", "other:1"]);
      // The 39 held runs: out of the due range, each in its own slot an hour apart, none lost.
      const [held] = await rows<{ held: number; due: number; slots: number }>(sql`
        select count(*)::int as held, count(*) filter (where wake_at <= durable_now())::int as due,
               count(distinct rate_slot_at)::int as slots
          from durable_runs where workflow = 'fcc-limited' and status = 'pending'`);
      expect(held).toEqual({ held: 39, due: 0, slots: 39 });
      const order = await rows<{ n: number }>(sql`
        select (input ->> 'n')::int as n from durable_runs
         where workflow = 'fcc-limited' and status = 'pending' order by wake_at`);
      expect(order.map((r) => r.n)).toEqual(Array.from({ length: 39 }, (_, n) => n + 1));
      // The next slot is an hour after the first start, not before.
      await durable.testing.advanceClock("59m");
      expect((await durable.tick()).claimed).toBe(0);
      await durable.testing.advanceClock("2m");
      expect((await durable.tick()).claimed).toBe(1);
    });

    it("an idle claim visits none of 200 runs waiting at distinct priorities; a due one is found at once", async () => {
      await durable.startMany(
        sleeper,
        Array.from({ length: 200 }, (_, p) => ({ p })),
      );
      for (;;) if ((await durable.tick({ concurrency: 4 })).claimed === 0) break;
      expect(await pending("fcc-sleeper")).toBe(0);
      /** The index scans and rows fetched through an index that one claim costs, in its transaction. */
      const claimCost = () =>
        db.transaction().execute(async (tx) => {
          const before = await readScans(tx);
          const { rows: claimed } = await sql<{ claimed: { run: { id: string } } | null }>`
            select durable_claim_run('["fcc-sleeper", "fcc-other"]'::jsonb, null, 60000, '[]'::jsonb,
                                     '{}'::jsonb, null, '{}'::jsonb) as claimed`.execute(tx);
          const after = await readScans(tx);
          return {
            claimed: claimed[0]!.claimed?.run.id ?? null,
            scans: after.scans - before.scans,
            fetched: after.fetched - before.fetched,
          };
        });
      // Nothing due: the claim answers at once, whatever the priorities of the waiting runs (0011
      // walked each of the 200 priorities, two index probes each: 401 scans).
      const idle = await claimCost();
      expect(idle.claimed).toBeNull();
      expect(idle.scans).toBeLessThanOrEqual(4);
      expect(idle.fetched).toBeLessThanOrEqual(4);
      // One due run below them all: found without a probe per priority above it.
      const { id } = await durable.start(other, { n: 1 }, { priority: -1 });
      const busy = await claimCost();
      expect(busy.claimed).toBe(id);
      expect(busy.scans).toBeLessThanOrEqual(8);
      expect(busy.fetched).toBeLessThanOrEqual(8);
    }, 120_000); // 200 runs driven to their sleep: on a loaded machine, more than the default 30 s

    it("120 runs past their ttl in front are ended, and the due run behind them claimed, in one tick", async () => {
      for (let n = 0; n < 120; n++) await durable.start(other, { n }, { ttl: "1s" });
      const behind = await durable.start(other, { n: 999 });
      await durable.testing.advanceClock("2s");
      // A claim ends at most 100 overdue runs a call; it then says there is more, not "nothing due".
      expect(await durable.tick()).toMatchObject({ claimed: 1, completed: 1 });
      expect((await durable.status(behind.id))?.status).toBe("completed");
      const [expired] = await rows<{ n: number }>(
        sql`select count(*)::int as n from durable_runs where error ->> 'code' = 'expired'`,
      );
      expect(expired!.n).toBe(120);
    });

    it("raising a rate limit releases the runs it held; removing it does too", async () => {
      for (let n = 0; n < 6; n++) await durable.start(limited, { n });
      expect((await durable.tick()).claimed).toBe(1);
      expect(await pending("fcc-limited")).toBe(5);
      // A deploy raises the limit to 3 an hour: two more start now, not an hour and two later.
      const raised = redeploy(3);
      expect((await raised.tick()).claimed).toBe(2);
      expect(await pending("fcc-limited")).toBe(3);
      // A deploy removes it: the rest start at once.
      const removed = redeploy(null);
      expect((await removed.tick()).claimed).toBe(3);
      expect(await pending("fcc-limited")).toBe(0);
      expect(ran.sort()).toEqual([0, 1, 2, 3, 4, 5].map((n) => `limited:${n}`).sort());
    });

    it("a fork is rate-limited like any first start", async () => {
      const { id } = await durable.start(limited, { n: 7 });
      expect((await durable.tick()).claimed).toBe(1);
      const fork = await durable.fork(id, { fromStep: "call" });
      // The key's one start this hour was the source's: the fork waits for the next.
      expect((await durable.tick()).claimed).toBe(0);
      expect((await durable.status(fork.id))?.status).toBe("pending");
      await durable.testing.advanceClock("61m");
      expect((await durable.tick()).claimed).toBe(1);
      expect((await durable.status(fork.id))?.status).toBe("completed");
    });

    it("a debounced run's start never lands after its ttl or deadline, first start or moved", async () => {
      const first = await durable.start(debounced, { doc: "a" }, { ttl: "10s" });
      const wakeIn = async (id: string) =>
        (
          await rows<{ s: number }>(
            sql`select round(extract(epoch from wake_at - durable_now()))::int as s from durable_runs where id = ${id}`,
          )
        )[0]!.s;
      expect(await wakeIn(first.id)).toBe(10);
      const late = await durable.start(debounced, { doc: "b" }, { deadline: "20s" });
      await durable.testing.advanceClock("5s");
      expect((await durable.start(debounced, { doc: "b" })).debounced).toBe(true); // moves it to now + 1m
      expect(await wakeIn(late.id)).toBe(15);
      // At the ttl and the deadline, a tick ends them (no status read needed to heal them).
      await durable.testing.advanceClock("16s");
      await durable.tick();
      const ended = await rows<{ id: string; status: string; code: string }>(
        sql`select id, status, error ->> 'code' as code from durable_runs order by id`,
      );
      expect(ended).toEqual(
        [
          { id: first.id, status: "failed", code: "expired" },
          { id: late.id, status: "failed", code: "deadline_exceeded" },
        ].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
    });
  });
}

/** This transaction's index scans and index-fetched rows of durable_runs so far. */
async function readScans(tx: Kysely<any>): Promise<{ scans: number; fetched: number }> {
  const { rows } = await sql<{ scans: string; fetched: string }>`
    select coalesce(idx_scan, 0) as scans, coalesce(idx_tup_fetch, 0) as fetched
      from pg_stat_xact_user_tables where relname = 'durable_runs'`.execute(tx);
  return { scans: Number(rows[0]!.scans), fetched: Number(rows[0]!.fetched) };
}
