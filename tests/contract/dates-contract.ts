// Dates and durations at their limits (docs/rules.md, rule 19), one suite run on every database:
// every date and duration a user passes is stored (a far one as "never") or refused at the API
// with InvalidInputError; no run is left retrying every lease because a time could not be stored.
import fc from "fast-check";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError, type WorkflowContext } from "@/lib/durable";
import { MAX_CLOCK_MS, MAX_DURATION_MS, MAX_INSTANT_MS, MAX_TIMER_MS } from "@/lib/durable/duration";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

type Body = (ctx: WorkflowContext<{ key: string }, any>) => Promise<unknown>;

/** What each run's body does, by the key in its input (a Date or NaN does not travel as JSON). */
const bodies = new Map<string, Body>();
let next = 0;
const keyFor = (body: Body): string => {
  const key = `k${next++}`;
  bodies.set(key, body);
  return key;
};

const child = defineWorkflow({
  name: "dates-child",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.sleep("nap", "1d");
    return 1;
  },
});

const dated = defineWorkflow({
  name: "dated",
  input: z.object({ key: z.string() }),
  signals: { go: z.object({}) },
  async run(ctx, input) {
    return bodies.get(input.key)!(ctx);
  },
});

/** A workflow with a deadline past Node's timer limit (24.8 days): its runs must still advance. */
const monthLong = defineWorkflow({
  name: "month-long",
  input: z.object({}),
  deadline: "30d",
  async run(ctx) {
    return ctx.step.run("work", async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return "done";
    });
  },
});

/** One run of it at a time: a second is due but held, which an idle worker polls for (pollMs). */
let openGate: (() => void) | null = null;
const oneAtATime = defineWorkflow({
  name: "one-at-a-time",
  input: z.object({}),
  concurrency: { key: () => "all", limit: 1 },
  async run(ctx) {
    return ctx.step.run("hold", () => new Promise<string>((resolve) => (openGate = () => resolve("done"))));
  },
});

const FAR_DATES: [string, Date | string][] = [
  ["new Date(8.64e15), JavaScript's last day", new Date(8.64e15)],
  ["year 10000", new Date(Date.UTC(10_000, 0, 1))],
  ["its ISO text, +275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.000Z"],
];
const PAST_DATES: [string, Date | string][] = [
  ["new Date(-8.64e15), JavaScript's first day", new Date(-8.64e15)],
  ["4714 BC, before PostgreSQL's first", "-004713-01-01T00:00:00.000Z"],
  ["1969", new Date(Date.UTC(1969, 6, 20))],
];
const FAR_DURATIONS: [string, number | string][] = [
  ["Number.MAX_SAFE_INTEGER", Number.MAX_SAFE_INTEGER],
  ["Number.MAX_VALUE", Number.MAX_VALUE],
  ["1e15 ms", 1e15],
  ['"100000000d"', "100000000d"],
];
const BAD_DURATIONS: unknown[] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, "1e3ms"];
const BAD_DATES: unknown[] = [new Date(Number.NaN), "not a date", Number.NaN, "", {}];

export function runDatesContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`dates and durations at their limits on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows: [dated, child, monthLong, oneAtATime],
        defaults: { lease: "2s", budget: "10s" },
        log: () => {},
      });
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
    });

    const tick = (budgetMs = 10_000) => durable.tick({ budgetMs });
    const start = async (body: Body, id: string, options: Record<string, unknown> = {}) =>
      (await durable.start(dated, { key: keyFor(body) }, { id, ...options })).id;

    /** The run as stored, and whether any claim ever found its lease run out (a heal). */
    const row = async (id: string) => {
      const { rows } = await sql<{ status: string; attempts: number; lost_claims: number; wake_at: string | null }>`
        select status, attempts, lost_claims, wake_at::text from durable_runs where id = ${id}`.execute(db);
      const heals = await sql<{ n: number }>`
        select count(*)::int as n from durable_events where run_id = ${id} and kind = 'heal'`.execute(db);
      return { ...rows[0]!, heals: Number(heals.rows[0]!.n) };
    };

    /**
     * Ticks, moves the clock an hour (past every lease), ticks again: a run that could not park
     * would be claimed again as a lost claim (a heal). Answers the run as then stored.
     */
    const settle = async (id: string) => {
      await tick();
      await durable.testing.advanceClock("1h");
      await tick();
      const stored = await row(id);
      // A status read never throws on what was stored.
      expect((await durable.status(id))?.status).toBe(stored.status);
      return stored;
    };

    const expectParked = async (id: string) => {
      const stored = await settle(id);
      expect(stored).toMatchObject({ status: "waiting", heals: 0, lost_claims: 0 });
      return stored;
    };

    it("parks a race on a far date as never, and its signal branch still wins", async () => {
      for (const [what, far] of FAR_DATES) {
        const id = `race-${what}`;
        await start((ctx) => ctx.step.waitForAny("r", { t: { until: far }, s: { signal: "go" } }), id);
        const stored = await expectParked(id);
        expect(stored.attempts).toBe(1);
        // The race wakes at its date, stored as the latest instant (the signal branch has none).
        expect(stored.wake_at).toMatch(/^9999-01-01 00:00:00(\+00)?/);
      }
    });

    it("stores a far date as the maximum instant, 9999-01-01, and answers it as a Date", async () => {
      await start((ctx) => ctx.step.sleepUntil("nap", new Date(8.64e15)), "far-sleep");
      await expectParked("far-sleep");
      // Counted from the database clock, as every sleep is: the latest instant, to the clock's
      // drift between the engine's reading and the statement's.
      const status = await durable.status("far-sleep");
      expect(Math.abs(Date.parse(status!.wakeAt!) - MAX_INSTANT_MS)).toBeLessThan(60_000);
      await durable.signal({ runId: "far-sleep", name: "go", payload: {} });
      await tick();
      // A signal never wakes a sleep (rule 8), far or not.
      expect((await row("far-sleep")).status).toBe("waiting");
    });

    it("parks every wait, timeout and delay of a far date or duration as never", async () => {
      const cases: [string, Body][] = [];
      for (const [what, far] of FAR_DATES) {
        cases.push([`sleepUntil ${what}`, (ctx) => ctx.step.sleepUntil("nap", far)]);
      }
      for (const [what, far] of FAR_DURATIONS) {
        cases.push(
          [`sleep ${what}`, (ctx) => ctx.step.sleep("nap", far)],
          [`race sleep ${what}`, (ctx) => ctx.step.waitForAny("r", { t: { sleep: far }, s: { signal: "go" } })],
          [`waitForSignal timeout ${what}`, (ctx) => ctx.step.waitForSignal("go", { timeout: far })],
          [
            `waitFor timeout and every ${what}`,
            (ctx) => ctx.step.waitFor("p", { poll: () => 1, ready: () => false, every: far, timeout: far }),
          ],
          [
            `retryDelay ${what}`,
            (ctx) =>
              ctx.step.run(
                "flaky",
                () => {
                  throw new Error("not yet");
                },
                { retries: 3, retryDelay: far },
              ),
          ],
          [
            `callback timeout ${what}`,
            async (ctx) => ctx.step.waitForCallback(await ctx.step.callback("cb", { timeout: far })),
          ],
          [`invoke timeout ${what}`, (ctx) => ctx.step.invoke("kid", child, {}, { timeout: far })],
        );
      }
      for (const [what, body] of cases) await start(body, what);
      await tick(30_000);
      await durable.testing.advanceClock("1h");
      await tick(30_000);
      for (const [what] of cases) {
        const stored = await row(what);
        expect({ what, ...stored }).toMatchObject({ what, status: "waiting", heals: 0, lost_claims: 0 });
        const status = await durable.status(what);
        // At most the latest instant (a sleep counts from the database clock: to its drift).
        expect({ what, wakeAt: status!.wakeAt }).toSatisfy(
          () => status!.wakeAt === null || Date.parse(status!.wakeAt) <= MAX_INSTANT_MS + 60_000,
        );
      }
      // The signal of a far signal wait still lands and ends it.
      await durable.signal({ runId: "waitForSignal timeout Number.MAX_SAFE_INTEGER", name: "go", payload: {} });
      await tick();
      expect((await row("waitForSignal timeout Number.MAX_SAFE_INTEGER")).status).toBe("completed");
    });

    it("reads a wake time past year 9999, stored by an earlier release, as never: the sleep holds", async () => {
      await start((ctx) => ctx.step.sleep("nap", "1d"), "legacy");
      await tick();
      expect((await row("legacy")).status).toBe("waiting");
      // What a release before rule 19 stored for sleep(1e15): a year with five digits. The run is
      // made due (as a signal delivery would), so the claim replays the sleep from its row.
      await sql`update durable_steps set wake_at = '33715-08-30 11:04:50+00' where run_id = 'legacy'`.execute(db);
      await sql`update durable_runs set wake_at = durable_now() where id = 'legacy'`.execute(db);
      await tick();
      expect(await row("legacy")).toMatchObject({ status: "waiting", heals: 0 });
      expect((await durable.status("legacy"))!.steps[0]).toMatchObject({ id: "nap", status: "waiting" });
    });

    it("answers a date before any the database holds as long past", async () => {
      for (const [what, past] of PAST_DATES) {
        await start(async (ctx) => {
          const won = await ctx.step.waitForAny("r", { t: { until: past }, s: { signal: "go" } });
          await ctx.step.sleepUntil("nap", past);
          return won.branch;
        }, `past ${what}`);
      }
      await tick();
      for (const [what] of PAST_DATES) {
        expect(await durable.status(`past ${what}`)).toMatchObject({ status: "completed", output: "t" });
      }
    });

    it("times a step out at its timeout, not at once, when the timeout is past Node's timer limit", async () => {
      const id = await start(
        (ctx) =>
          ctx.step.run(
            "slow",
            async (s) => {
              // A body that honours its abortSignal, as a timeout asks it to.
              await new Promise((resolve, reject) => {
                setTimeout(resolve, 50);
                s.abortSignal.addEventListener("abort", () => reject(s.abortSignal.reason));
              });
              return "ran";
            },
            { timeout: MAX_TIMER_MS + 1 },
          ),
        "long-timeout",
      );
      await tick();
      expect(await durable.status(id)).toMatchObject({ status: "completed", output: "ran" });
    });

    it("advances a run whose deadline is past Node's timer limit (30 days)", async () => {
      await durable.start(monthLong, {}, { id: "month" });
      const stored = await settle("month");
      expect(stored).toMatchObject({ status: "completed", heals: 0 });
      expect((await durable.status("month"))!.output).toBe("done");
    });

    it("beats a heartbeat past Node's timer limit at most as often as the limit", async () => {
      const spy = vi.spyOn(globalThis, "setInterval");
      try {
        const id = await start(
          (ctx) => ctx.step.run("beating", () => "ok", { lease: "60d", heartbeat: "30d" }),
          "long-heartbeat",
        );
        await durable.advance(id, { budgetMs: 90 * 86_400_000 });
        expect(await durable.status(id)).toMatchObject({ status: "completed", output: "ok" });
        const delays = spy.mock.calls.map((call) => call[1] ?? 0);
        expect(delays).toContain(MAX_TIMER_MS);
        expect(delays.every((ms) => ms <= MAX_TIMER_MS)).toBe(true);
      } finally {
        spy.mockRestore();
      }
    });

    it("lets an idle worker with a poll interval past Node's timer limit wait at the limit, not spin", async () => {
      const spy = vi.spyOn(globalThis, "setTimeout");
      const stop = new AbortController();
      try {
        await durable.start(oneAtATime, {}, { id: "held-1" });
        await durable.start(oneAtATime, {}, { id: "held-2" });
        const working = durable.work({ concurrency: 2, signal: stop.signal, pollMs: MAX_TIMER_MS + 1_000 });
        // One run holds the key; the other is due but held, so the idle loop waits its poll interval.
        await until(() => spy.mock.calls.some((call) => (call[1] ?? 0) >= MAX_TIMER_MS));
        const delays = spy.mock.calls.map((call) => call[1] ?? 0);
        expect(Math.max(...delays)).toBe(MAX_TIMER_MS);
        openGate?.();
        await until(async () => (await durable.status("held-1"))?.status === "completed");
        stop.abort();
        openGate?.();
        await working;
      } finally {
        stop.abort();
        spy.mockRestore();
      }
    });

    it("fails a run whose body passes a duration or date that is none, and never wedges it", async () => {
      const cases: [string, Body][] = [];
      BAD_DURATIONS.forEach((bad, i) => {
        cases.push(
          [`sleep ${i}`, (ctx) => ctx.step.sleep("nap", bad as never)],
          [`timeout ${i}`, (ctx) => ctx.step.waitForSignal("go", { timeout: bad as never })],
          [`race sleep ${i}`, (ctx) => ctx.step.waitForAny("r", { t: { sleep: bad as never } })],
        );
      });
      BAD_DATES.forEach((bad, i) => {
        cases.push(
          [`until ${i}`, (ctx) => ctx.step.waitForAny("r", { t: { until: bad as never } })],
          [`sleepUntil ${i}`, (ctx) => ctx.step.sleepUntil("nap", bad as never)],
        );
      });
      for (const [what, body] of cases) await start(body, what);
      await tick(30_000);
      for (const [what] of cases) {
        const stored = await row(what);
        expect({ what, status: stored.status, heals: stored.heals }).toEqual({ what, status: "failed", heals: 0 });
        expect((await durable.status(what))!.error).toMatchObject({ code: "invalid_input" });
      }
    });

    it("stores a far deadline and ttl at start, and refuses one that is no duration", async () => {
      for (const [what, far] of FAR_DURATIONS) {
        const id = await start((ctx) => ctx.step.run("a", () => 1), `far start ${what}`, { deadline: far, ttl: far });
        await tick();
        expect(await durable.status(id)).toMatchObject({ status: "completed", output: 1 });
      }
      for (const bad of BAD_DURATIONS) {
        for (const option of ["deadline", "ttl"]) {
          await expect(
            durable.start(dated, { key: "none" }, { id: `bad ${option}`, [option]: bad as never }),
          ).rejects.toSatisfy(InvalidInputError.is);
          expect(await durable.status(`bad ${option}`)).toBeNull();
        }
      }
    });

    it("lists by created dates of any size, and refuses what is no date", async () => {
      await start((ctx) => ctx.step.run("a", () => 1), "listed");
      const ids = async (filter: Record<string, unknown>) => (await durable.list(filter)).runs.map((run) => run.id);
      expect(await ids({ createdAfter: new Date(8.64e15) })).toEqual([]);
      expect(await ids({ createdBefore: new Date(8.64e15) })).toEqual(["listed"]);
      expect(await ids({ createdAfter: new Date(-8.64e15) })).toEqual(["listed"]);
      expect(await ids({ createdBefore: new Date(-8.64e15) })).toEqual([]);
      expect(await ids({ createdAfter: "9999-12-31T23:59:59.999Z" })).toEqual([]);
      for (const bad of BAD_DATES) {
        await expect(durable.list({ createdAfter: bad as never })).rejects.toSatisfy(InvalidInputError.is);
      }
      const forged = Buffer.from(JSON.stringify(["9".repeat(30), "x"])).toString("base64url");
      await expect(durable.list({ cursor: forged })).rejects.toSatisfy(InvalidInputError.is);
    });

    it("refuses a budget that is no number, and takes an endless one as the longest duration", async () => {
      await expect(durable.tick({ budgetMs: Number.NaN })).rejects.toSatisfy(InvalidInputError.is);
      await expect(durable.advance("none", { budgetMs: Number.NaN })).rejects.toSatisfy(InvalidInputError.is);
      const id = await start((ctx) => ctx.step.run("a", () => 1), "endless-budget");
      await durable.advance(id, { budgetMs: Number.POSITIVE_INFINITY });
      expect(await durable.status(id)).toMatchObject({ status: "completed", output: 1 });
      await tick(Number.MAX_VALUE);
      await tick(-1);
    });

    it("moves the clock by at most the longest duration, and never past the latest clock", async () => {
      const now = async () =>
        new Date((await sql<{ now: string }>`select durable_now()::text as now`.execute(db)).rows[0]!.now).getTime();
      const before = await now();
      await durable.testing.advanceClock(Number.MAX_SAFE_INTEGER);
      const moved = (await now()) - before;
      expect(moved).toBeGreaterThanOrEqual(MAX_DURATION_MS);
      expect(moved).toBeLessThan(MAX_DURATION_MS + 60_000);
      let refused: unknown;
      for (let i = 0; i < 10 && !refused; i++) {
        await durable.testing.advanceClock(MAX_DURATION_MS).catch((error) => {
          refused = error;
        });
      }
      expect(InvalidInputError.is(refused)).toBe(true);
      const latest = await now();
      expect(latest).toBeLessThanOrEqual(MAX_CLOCK_MS);
      // At the latest clock, the longest waits are still stored and read back.
      await start((ctx) => ctx.step.waitForSignal("go", { timeout: Number.MAX_SAFE_INTEGER }), "late");
      const stored = await settle("late");
      expect(stored).toMatchObject({ status: "waiting", heals: 0 });
      for (const bad of BAD_DURATIONS) {
        await expect(durable.testing.advanceClock(bad as never)).rejects.toSatisfy(InvalidInputError.is);
      }
    });

    it("ends every run waiting or terminal, never retrying every lease, whatever date or duration", async () => {
      const anyDate = fc.oneof(
        fc.date({ noInvalidDate: false }),
        fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15) }),
        fc.constantFrom(new Date(8.64e15), new Date(-8.64e15), new Date(Number.NaN)),
        fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms).toISOString()),
        fc.string(),
      );
      const anyDuration = fc.oneof(
        fc.double(),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.constantFrom(Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 31, Number.NaN, -0, 8.64e15),
        fc
          .tuple(fc.nat({ max: 10 ** 12 }), fc.constantFrom("ms", "s", "m", "h", "d"))
          .map(([n, unit]) => `${n}${unit}`),
        fc.string(),
      );
      const use = fc.oneof(
        anyDate.map((at) => ({
          what: "until",
          body: ((ctx) => ctx.step.waitForAny("r", { t: { until: at } })) as Body,
        })),
        anyDate.map((at) => ({ what: "sleepUntil", body: ((ctx) => ctx.step.sleepUntil("nap", at)) as Body })),
        anyDuration.map((d) => ({ what: "sleep", body: ((ctx) => ctx.step.sleep("nap", d)) as Body })),
        anyDuration.map((d) => ({
          what: "race sleep",
          body: ((ctx) => ctx.step.waitForAny("r", { t: { sleep: d } })) as Body,
        })),
        anyDuration.map((d) => ({
          what: "signal",
          body: ((ctx) => ctx.step.waitForSignal("go", { timeout: d })) as Body,
        })),
        anyDuration.map((d) => ({
          what: "poll",
          body: ((ctx) => ctx.step.waitFor("p", { poll: () => 1, ready: () => false, every: d, timeout: d })) as Body,
        })),
        anyDuration.map((d) => ({
          what: "retry",
          body: ((ctx) =>
            ctx.step.run(
              "x",
              () => {
                throw new Error("again");
              },
              { retries: 2, retryDelay: d, retryBackoff: { maxDelay: d } },
            )) as Body,
        })),
        anyDuration.map((d) => ({
          what: "callback",
          body: (async (ctx) => ctx.step.waitForCallback(await ctx.step.callback("cb", { timeout: d }))) as Body,
        })),
        anyDuration.map((d) => ({
          what: "invoke",
          body: ((ctx) => ctx.step.invoke("kid", child, {}, { timeout: d })) as Body,
        })),
        anyDuration.map((d) => ({
          what: "deadline",
          body: ((ctx) => ctx.step.sleep("nap", "1m")) as Body,
          deadline: d,
        })),
        anyDuration.map((d) => ({ what: "ttl", body: ((ctx) => ctx.step.sleep("nap", "1m")) as Body, ttl: d })),
      );
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(use, { minLength: 1, maxLength: 4 }), async (uses) => {
          await resetDurableTables(db);
          const ids: string[] = [];
          for (const { what, body, ...options } of uses) {
            const id = `p${n++} ${what}`;
            try {
              await start(body, id, options);
              ids.push(id);
            } catch (error) {
              // Refused at the API: with InvalidInputError, and nothing stored.
              expect(InvalidInputError.is(error)).toBe(true);
              expect(await durable.status(id)).toBeNull();
            }
          }
          await tick(30_000);
          await durable.testing.advanceClock("1h");
          await tick(30_000);
          for (const id of ids) {
            const stored = await row(id);
            expect({ id, ...stored }).toMatchObject({ id, heals: 0, lost_claims: 0 });
            expect(["waiting", "completed", "failed", "cancelled"]).toContain(stored.status);
            const status = await durable.status(id);
            expect(status!.status).toBe(stored.status);
          }
        }),
        { numRuns: 25 },
      );
    }, 240_000);
  });
}
