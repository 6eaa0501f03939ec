// Schedules on the real server: eight instances (own pools, like eight function instances) tick at
// once while the database clock moves; each due slot's run is started exactly once, none skipped.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const LOOPS = 8;
const PERIOD_MS = 5 * 60_000;
const executions = new Map<string, number>();

const fiveMinutely = defineWorkflow({
  name: "racing-schedule",
  input: z.object({ source: z.string() }),
  schedule: { cron: "*/5 * * * *", input: { source: "cron" } },
  async run(ctx, input) {
    return ctx.step.run("count", () => {
      executions.set(ctx.runId, (executions.get(ctx.runId) ?? 0) + 1);
      return input.source;
    });
  },
});

let url: string;
let admin: Kysely<any>;
let setup: Durable;
let instances: Durable[] = [];
const logged: string[] = [];

beforeAll(async () => {
  url = await createTestDatabase("durable_schedules");
  admin = await connect(url, { driver: "pg" });
  setup = createDurable({ db: admin, workflows: [fiveMinutely], defaults: { lease: "2s" } });
  await setup.migrate();
  // Every insert a start tries, also those ON CONFLICT DO NOTHING skips: how often a slot was raced.
  await sql`create table start_attempts (id text not null)`.execute(admin);
  await sql`create function note_start_attempt() returns trigger language plpgsql as $$
    begin insert into start_attempts values (new.id); return new; end $$`.execute(admin);
  await sql`create trigger note_start_attempt before insert on durable_runs
    for each row execute function note_start_attempt()`.execute(admin);
  for (let i = 0; i < LOOPS; i++) {
    instances.push(
      createDurable({
        db: await connect(url, { driver: "pg", poolSize: 2 }),
        workflows: [fiveMinutely],
        defaults: { lease: "2s" },
        log: (message) => logged.push(message),
      }),
    );
  }
});
afterAll(async () => {
  await Promise.all(instances.map((durable) => durable.close()));
  instances = [];
  await admin?.destroy();
});
beforeEach(async () => {
  await resetDurableTables(admin);
  await sql`truncate durable_schedules, start_attempts`.execute(admin);
  executions.clear();
  logged.length = 0;
});

const dbNow = async () =>
  new Date((await sql<{ now: Date }>`select durable_now() as now`.execute(admin)).rows[0]!.now).getTime();

/** Moves the database clock (every instance's) forward to `ms` since the epoch. */
async function setClock(ms: number): Promise<void> {
  const shift = ms - (await dbNow());
  expect(shift).toBeGreaterThan(0);
  await setup.testing.advanceClock(shift);
}

const slotId = (ms: number) => `racing-schedule@${new Date(ms).toISOString()}`;
/** The latest slot of `*\/5 * * * *` at or before `ms`. */
const latestSlot = (ms: number) => Math.floor(ms / PERIOD_MS) * PERIOD_MS;

const runRows = async () =>
  (
    await sql<{ id: string; status: string; input: unknown }>`
      select id, status, input from durable_runs order by id`.execute(admin)
  ).rows;

// 10:01 on a January day of 2030: a minute past a slot, four minutes before the next, so the real
// time the test takes never crosses a slot; only the advances below do.
const START = Date.parse("2030-01-15T10:01:00.000Z");

it(`${LOOPS} racing tick loops start each due slot exactly once while the clock moves, none skipped`, async () => {
  await setClock(START);
  let done = false;
  const scheduledBy = new Array<number>(LOOPS).fill(0);
  const ticksBy = new Array<number>(LOOPS).fill(0);
  const loops = instances.map(async (durable, i) => {
    while (!done) {
      const report = await durable.tick({ budgetMs: 5_000 });
      scheduledBy[i]! += report.scheduled;
      ticksBy[i]!++;
      expect(report.warnings).toEqual([]);
    }
  });

  const schedule = async () => (await setup.schedules())[0]!;
  // First seen at 10:01: the first slot is 10:05.
  await until(async () => (await schedule()).nextSlot?.getTime() === START + 4 * 60_000, 10_000);

  // One period at a time (each slot starts), then jumps of several periods (only the latest starts).
  const advances = [1, 1, 1, 1, 1, 3, 1, 1, 7, 1, 2, 1, 1, 12, 1, 1, 1, 4, 1, 1];
  const expected: string[] = [];
  let position = START;
  for (const periods of advances) {
    position += periods * PERIOD_MS;
    await setClock(position);
    const slot = latestSlot(position);
    expected.push(slotId(slot));
    // Settled: the slot's run started and the row moved on to the next slot; the run completed
    // (a clock moved under a claimed run would end its lease, and its step would run again).
    await until(async () => {
      const row = await schedule();
      if (row.lastRunId !== slotId(slot) || row.nextSlot?.getTime() !== slot + PERIOD_MS) return false;
      return (await instances[0]!.status(slotId(slot)))?.status === "completed";
    }, 10_000);
  }
  done = true;
  await Promise.all(loops);

  const rows = await runRows();
  expect(rows.map((row) => row.id)).toEqual([...expected].sort());
  expect(rows.every((row) => JSON.stringify(row.input) === JSON.stringify({ source: "cron" }))).toBe(true);
  // Each slot was reported by exactly one tick: the one whose conditional move won.
  expect(scheduledBy.reduce((a, b) => a + b, 0)).toBe(expected.length);
  // The loops really raced: every loop ticked many times, and more than one started slots.
  expect(Math.min(...ticksBy)).toBeGreaterThan(advances.length);
  expect(scheduledBy.filter((n) => n > 0).length).toBeGreaterThan(1);
  for (const id of expected) expect(executions.get(id), id).toBe(1);
  const attempts = await sql<{ n: number }>`select count(*)::int as n from start_attempts`.execute(admin);
  // The loops did race for the slots: more starts were tried than runs exist (about 7 a slot).
  expect(attempts.rows[0]!.n).toBeGreaterThan(expected.length);
  expect(logged).toEqual([]);
});

it(`${LOOPS} instances ticking at the same instant on a due schedule start its latest slot once`, async () => {
  await setClock(START);
  await instances[0]!.tick({ budgetMs: 5_000 }); // first seen: plans 10:05
  const expected: string[] = [];
  let position = START;
  for (let round = 1; round <= 15; round++) {
    // 1 to 3 periods: the latest due slot only, whatever the others did.
    position += (1 + (round % 3)) * PERIOD_MS;
    await setClock(position);
    expected.push(slotId(latestSlot(position)));
    const reports = await Promise.all(instances.map((durable) => durable.tick({ budgetMs: 5_000 })));
    expect(
      reports.reduce((sum, report) => sum + report.scheduled, 0),
      `round ${round}`,
    ).toBe(1);
    const row = (await setup.schedules())[0]!;
    expect(row.lastRunId).toBe(slotId(latestSlot(position)));
    expect(row.nextSlot?.getTime()).toBe(latestSlot(position) + PERIOD_MS);
  }
  await until(async () => {
    await instances[0]!.tick({ budgetMs: 5_000 });
    return (await runRows()).every((row) => row.status === "completed");
  }, 20_000);
  expect((await runRows()).map((row) => row.id)).toEqual([...expected].sort());
  for (const id of expected) expect(executions.get(id), id).toBe(1);
  // The instances did race for the slots: more starts were tried than runs exist.
  const attempts = await sql<{ n: number }>`select count(*)::int as n from start_attempts`.execute(admin);
  expect(attempts.rows[0]!.n).toBeGreaterThan(expected.length);
  expect(logged).toEqual([]);
});
