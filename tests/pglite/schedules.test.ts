// Workflow option `schedule` on PGlite: slots on the database clock, the first after the schedule
// is first seen, the latest due one started (no backfill), re-planned when the cron changes.
import { type KyselyPlugin, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, connect, createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { createScheduler, validateSchedule } from "@/lib/durable/engine/schedules";
import type { DurableDb } from "@/lib/durable/store";
import type { AnyWorkflow } from "@/lib/durable/types";
import { nightlyDigest } from "@/app/workflows/nightly-digest";
import { resetDurableTables } from "../helpers/databases";

let db: AnyKysely;
const logged: string[] = [];
const instances: Durable[] = [];

beforeAll(async () => {
  db = await connect("memory://");
  await createDurable({ db, workflows: [] }).migrate();
});
afterAll(async () => {
  await db?.destroy();
});
beforeEach(async () => {
  await resetDurableTables(db);
  await sql`truncate durable_schedules`.execute(db);
  logged.length = 0;
  instances.length = 0;
});

/** A durable instance on the file's database (never closed: that would destroy the shared db). */
function instance(workflows: AnyWorkflow[]): Durable {
  const durable = createDurable({ db, workflows, log: (message) => logged.push(message), defaults: { lease: "2s" } });
  instances.push(durable);
  return durable;
}

const dbNow = async () => new Date((await sql<{ now: Date }>`select durable_now() as now`.execute(db)).rows[0]!.now);

/** Moves the database clock forward to `iso` (the tests' dates are in 2030, after any real now). */
async function setClock(durable: Durable, iso: string): Promise<void> {
  const ms = Date.parse(iso) - (await dbNow()).getTime();
  expect(ms).toBeGreaterThan(0);
  await durable.testing.advanceClock(ms);
}

const runIds = async () =>
  (await sql<{ id: string }>`select id from durable_runs order by id`.execute(db)).rows.map((row) => row.id);

const tick = (durable: Durable) => durable.tick({ budgetMs: 10_000 });

// The input has a default: the run gets the schedule's input as the schema parses it.
const digestInput = z.object({ label: z.string(), limit: z.number().default(10) });
const everyFive = defineWorkflow({
  name: "every-five",
  input: digestInput,
  schedule: { cron: "*/5 * * * *", input: { label: "digest" } },
  async run(ctx, input) {
    return ctx.step.run("echo", () => ({ ...input, runId: ctx.runId }));
  },
});

describe("schedules (PGlite)", () => {
  it("plans the first slot after the schedule is first seen and starts nothing before it", async () => {
    const durable = instance([everyFive]);
    expect(await durable.schedules()).toEqual([
      { workflow: "every-five", cron: "*/5 * * * *", timezone: "UTC", nextSlot: null, lastSlot: null, lastRunId: null },
    ]);
    // 10:01: the 10:00 slot is past when the schedule is first seen: never started.
    await setClock(durable, "2030-01-15T10:01:00.000Z");
    expect((await tick(durable)).scheduled).toBe(0);
    expect(await runIds()).toEqual([]);
    expect(await durable.schedules()).toEqual([
      {
        workflow: "every-five",
        cron: "*/5 * * * *",
        timezone: "UTC",
        nextSlot: new Date("2030-01-15T10:05:00.000Z"),
        lastSlot: null,
        lastRunId: null,
      },
    ]);
    // Ticking again before the slot changes nothing.
    await durable.testing.advanceClock("3m");
    expect((await tick(durable)).scheduled).toBe(0);
    expect((await durable.schedules())[0]!.nextSlot).toEqual(new Date("2030-01-15T10:05:00.000Z"));
    expect(await runIds()).toEqual([]);
  });

  it("starts a due slot's run with id <name>@<slot ISO time> and the parsed schedule input, once", async () => {
    const durable = instance([everyFive]);
    await setClock(durable, "2030-01-15T10:01:00.000Z");
    await tick(durable);
    await durable.testing.advanceClock("5m"); // 10:06
    const report = await tick(durable);
    expect(report.scheduled).toBe(1);
    const id = "every-five@2030-01-15T10:05:00.000Z";
    expect(await runIds()).toEqual([id]);
    // The same tick claimed it: the run completed with the input as the schema parsed it.
    expect(await durable.status(id)).toMatchObject({
      workflow: "every-five",
      status: "completed",
      output: { label: "digest", limit: 10, runId: id },
    });
    expect((await durable.schedules())[0]).toMatchObject({
      nextSlot: new Date("2030-01-15T10:10:00.000Z"),
      lastSlot: new Date("2030-01-15T10:05:00.000Z"),
      lastRunId: id,
    });
    // Another tick in the same period starts nothing more.
    expect((await tick(durable)).scheduled).toBe(0);
    expect(await runIds()).toEqual([id]);
    expect(logged).toEqual([]);
  });

  it("after several missed periods starts only the latest slot (no backfill)", async () => {
    const durable = instance([everyFive]);
    await setClock(durable, "2030-01-15T10:01:00.000Z");
    await tick(durable);
    await durable.testing.advanceClock("28m"); // 10:29: slots 10:05 … 10:25 passed
    expect((await tick(durable)).scheduled).toBe(1);
    expect(await runIds()).toEqual(["every-five@2030-01-15T10:25:00.000Z"]);
    expect((await durable.schedules())[0]).toMatchObject({
      nextSlot: new Date("2030-01-15T10:30:00.000Z"),
      lastSlot: new Date("2030-01-15T10:25:00.000Z"),
    });
    // Exactly on a slot: that slot is due (slot <= now).
    await setClock(durable, "2030-01-15T10:30:00.000Z");
    expect((await tick(durable)).scheduled).toBe(1);
    expect(await runIds()).toEqual(["every-five@2030-01-15T10:25:00.000Z", "every-five@2030-01-15T10:30:00.000Z"]);
  });

  it("re-plans when the cron or the timezone changes, without starting the old cron's due slot", async () => {
    const before = instance([everyFive]);
    await setClock(before, "2030-01-15T10:01:00.000Z");
    await tick(before);
    await before.testing.advanceClock("5m"); // 10:06: the old cron's 10:05 slot is due
    // A deploy changes the cron: the next slot is the first of the new cron after now.
    const hourly = defineWorkflow({ ...everyFive, schedule: { cron: "0 * * * *", input: { label: "hourly" } } });
    const after = instance([hourly]);
    expect((await after.schedules())[0]!.nextSlot).toBeNull(); // the row is the old cron's
    expect((await tick(after)).scheduled).toBe(0);
    expect(await runIds()).toEqual([]);
    expect(await after.schedules()).toEqual([
      {
        workflow: "every-five",
        cron: "0 * * * *",
        timezone: "UTC",
        nextSlot: new Date("2030-01-15T11:00:00.000Z"),
        lastSlot: null,
        lastRunId: null,
      },
    ]);
    // The old instance sees a row planned under another cron.
    expect((await before.schedules())[0]!.nextSlot).toBeNull();
    // The same cron in another timezone re-plans too: 11:00 in New York is 16:00Z in January.
    const newYork = defineWorkflow({
      ...hourly,
      schedule: { cron: "0 11 * * *", timezone: "America/New_York", input: { label: "ny" } },
    });
    const third = instance([newYork]);
    await tick(third);
    expect((await third.schedules())[0]).toMatchObject({
      timezone: "America/New_York",
      nextSlot: new Date("2030-01-15T16:00:00.000Z"),
    });
    await setClock(third, "2030-01-15T16:00:30.000Z");
    expect((await tick(third)).scheduled).toBe(1);
    expect(await runIds()).toEqual(["every-five@2030-01-15T16:00:00.000Z"]);
    expect((await third.status("every-five@2030-01-15T16:00:00.000Z"))?.output).toMatchObject({ label: "ny" });
  });

  it("honours the timezone: 0 9 * * * in Europe/Berlin is 08:00Z in winter and 07:00Z in summer", async () => {
    const berlin = defineWorkflow({
      name: "berlin",
      input: z.object({}),
      schedule: { cron: "0 9 * * *", timezone: "Europe/Berlin", input: {} },
      run: async () => "guten Morgen",
    });
    const durable = instance([berlin]);
    await setClock(durable, "2030-01-15T06:00:00.000Z");
    await tick(durable);
    expect((await durable.schedules())[0]).toMatchObject({
      timezone: "Europe/Berlin",
      nextSlot: new Date("2030-01-15T08:00:00.000Z"),
    });
    await setClock(durable, "2030-01-15T08:30:00.000Z");
    expect((await tick(durable)).scheduled).toBe(1);
    expect(await runIds()).toEqual(["berlin@2030-01-15T08:00:00.000Z"]);
    expect((await durable.schedules())[0]!.nextSlot).toEqual(new Date("2030-01-16T08:00:00.000Z"));
    // In summer (CEST, UTC+2) 09:00 in Berlin is 07:00Z: skipping months starts only the latest.
    await setClock(durable, "2030-07-15T07:30:00.000Z");
    expect((await tick(durable)).scheduled).toBe(1);
    expect(await runIds()).toEqual(["berlin@2030-01-15T08:00:00.000Z", "berlin@2030-07-15T07:00:00.000Z"]);
    expect((await durable.schedules())[0]!.nextSlot).toEqual(new Date("2030-07-16T07:00:00.000Z"));
  });

  it("runs the reference app's nightly digest at 09:00 UTC with a summary of the last day", async () => {
    const noop = defineWorkflow({ name: "noop", input: z.object({}), run: async () => null });
    const durable = instance([nightlyDigest, noop]);
    await setClock(durable, "2030-01-15T10:00:00.000Z");
    await tick(durable); // first seen: 09:00 tomorrow
    expect((await durable.schedules())[0]).toMatchObject({
      workflow: "nightly-digest",
      cron: "0 9 * * *",
      timezone: "UTC",
      nextSlot: new Date("2030-01-16T09:00:00.000Z"),
    });
    await durable.start(noop, {}, { id: "old" }); // 10:00 on the 15th: 23 h before the slot
    await setClock(durable, "2030-01-16T08:00:00.000Z");
    await durable.start(noop, {}, { id: "recent" });
    await durable.start(noop, {}, { id: "other" });
    await setClock(durable, "2030-01-16T09:00:05.000Z");
    expect((await tick(durable)).scheduled).toBe(1);
    expect(await durable.status("nightly-digest@2030-01-16T09:00:00.000Z")).toMatchObject({
      status: "completed",
      output: {
        hours: 24,
        counts: [{ workflow: "noop", status: "completed", n: 3 }],
        summary: "3 runs of 1 workflow in the last 24 h, 0 failed.",
      },
    });
  });

  it("moves on past a slot whose singleton key is held, and says so", async () => {
    const exclusive = defineWorkflow({
      name: "exclusive",
      input: z.object({ branch: z.string() }),
      singleton: { key: (input) => input.branch },
      signals: { done: z.object({}) },
      schedule: { cron: "*/5 * * * *", input: { branch: "main" } },
      async run(ctx) {
        await ctx.step.waitForSignal("done");
        return "ok";
      },
    });
    const durable = instance([exclusive]);
    await durable.start(exclusive, { branch: "main" }, { id: "manual" });
    await setClock(durable, "2030-01-15T10:01:00.000Z");
    await tick(durable);
    await durable.testing.advanceClock("5m");
    expect((await tick(durable)).scheduled).toBe(0);
    expect(await runIds()).toEqual(["manual"]);
    expect(logged.join("\n")).toMatch(/workflow "exclusive": the run of schedule slot 2030-01-15T10:05:00.000Z/);
    expect(logged.join("\n")).toContain('"manual"');
    expect((await durable.schedules())[0]).toMatchObject({
      nextSlot: new Date("2030-01-15T10:10:00.000Z"),
      lastSlot: null,
      lastRunId: null,
    });
  });

  it("a tick that dies between the start and the move starts the same run again, and moves it once", async () => {
    const durable = instance([everyFive]);
    const started: Array<{ id: string; created: boolean }> = [];
    let crash = true;
    const scheduler = createScheduler({
      db: db as DurableDb,
      workflows: durable.workflows,
      start: async (workflow, input, id) => {
        const result = await durable.start(workflow, input as never, { id });
        started.push({ id, created: result.created });
        if (crash) throw new Error("killed after the start");
        return result;
      },
      log: (message) => logged.push(message),
    });
    await setClock(durable, "2030-01-15T10:01:00.000Z");
    expect(await scheduler.startDue()).toEqual([]);
    await durable.testing.advanceClock("5m");
    expect(await scheduler.startDue()).toEqual([]);
    expect(logged.join("\n")).toMatch(/killed after the start; the next tick tries again/);
    expect((await durable.schedules())[0]!.nextSlot).toEqual(new Date("2030-01-15T10:05:00.000Z")); // still due
    crash = false;
    const id = "every-five@2030-01-15T10:05:00.000Z";
    expect(await scheduler.startDue()).toEqual([id]);
    expect(started).toEqual([
      { id, created: true },
      { id, created: false },
    ]);
    expect(await runIds()).toEqual([id]);
    expect((await durable.schedules())[0]).toMatchObject({
      nextSlot: new Date("2030-01-15T10:10:00.000Z"),
      lastRunId: id,
    });
  });

  it("costs no query without scheduled workflows, and one read per tick when nothing is due", async () => {
    const untouchable = new Proxy({} as DurableDb, {
      get() {
        throw new Error("the scheduler touched the database");
      },
    });
    const idle = createScheduler({ db: untouchable, workflows: new Map(), start: async () => {}, log: () => {} });
    expect(await idle.startDue()).toEqual([]);
    expect(await idle.list()).toEqual([]);

    let queries = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const durable = instance([everyFive]);
    const scheduler = createScheduler({
      db: (db as DurableDb).withPlugin(counter),
      workflows: durable.workflows,
      start: (workflow, input, id) => durable.start(workflow, input as never, { id }),
      log: () => {},
    });
    await setClock(durable, "2030-01-15T10:01:00.000Z");
    await scheduler.startDue(); // first seen: the read and the insert
    expect(queries).toBe(2);
    queries = 0;
    await scheduler.startDue();
    await scheduler.startDue();
    expect(queries).toBe(2); // one read each
  });

  it("refuses an invalid cron, an unknown timezone or an input the workflow refuses, naming the workflow", () => {
    const base = { name: "nightly", input: z.object({ n: z.number() }), run: async () => null };
    const check = (schedule: unknown) => () => validateSchedule({ ...base, schedule } as unknown as AnyWorkflow);
    expect(check({ cron: "0 9 * * *", input: { n: 1 } })).not.toThrow();
    expect(check({ cron: "@daily", timezone: "Europe/Berlin", input: { n: 1 } })).not.toThrow();
    expect(check(undefined)).not.toThrow();
    for (const cron of ["not a cron", "61 * * * *", "0 9 * *", "0 0 9 * * *", "", "0 0 30 2 *", 42]) {
      const call = check({ cron, input: { n: 1 } });
      expect(call, String(cron)).toThrow(InvalidInputError);
      expect(call, String(cron)).toThrow(/workflow "nightly": schedule\.cron/);
    }
    for (const timezone of ["Mars/Olympus", "+01:00", ""]) {
      expect(check({ cron: "0 9 * * *", timezone, input: { n: 1 } })).toThrow(InvalidInputError);
      expect(check({ cron: "0 9 * * *", timezone, input: { n: 1 } })).toThrow(
        /workflow "nightly": schedule\.timezone .* is not an IANA timezone/,
      );
    }
    expect(check({ cron: "0 9 * * *", input: { n: "one" } })).toThrow(/workflow "nightly": schedule\.input/);
    expect(check({ cron: "0 9 * * *" })).toThrow(/give one/);
    // A run id is <name>@<slot>: a name too long for that is refused.
    expect(() =>
      validateSchedule({ ...base, name: "n".repeat(240), schedule: { cron: "0 9 * * *", input: { n: 1 } } } as never),
    ).toThrow(/at most 230 characters/);
  });

  it("createDurable refuses a workflow whose schedule is invalid", () => {
    const broken = { ...everyFive, schedule: { cron: "0 25 * * *", input: { label: "x" } } } as AnyWorkflow;
    expect(() => createDurable({ db, workflows: [broken] })).toThrow(/workflow "every-five": schedule\.cron/);
  });

  it("defineWorkflow refuses an invalid schedule", () => {
    const define = (schedule: { cron: string; timezone?: string }) => () =>
      defineWorkflow({
        name: "nightly",
        input: z.object({}),
        schedule: { ...schedule, input: {} },
        run: async () => 1,
      });
    expect(define({ cron: "0 9 * * *", timezone: "Europe/Berlin" })).not.toThrow();
    expect(define({ cron: "every day at nine" })).toThrow(InvalidInputError);
    expect(define({ cron: "every day at nine" })).toThrow(/workflow "nightly"/);
    expect(define({ cron: "0 9 * * *", timezone: "Europe/Atlantis" })).toThrow(
      /workflow "nightly": schedule\.timezone/,
    );
  });
});
