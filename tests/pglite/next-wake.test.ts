// The tick report's `nextWakeAt` and `nextWakeInMs` on PGlite: the earliest wake time of a run of
// the instance's workflows, by the database clock (the clock tests shift counts), read as the tick
// ends; null when none waits on time. What the local cron of `next dev` schedules its next call by.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyKysely, connect, createDurable, defineWorkflow } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

const nap = defineWorkflow({
  name: "nap",
  input: z.object({ minutes: z.number() }),
  async run(ctx, input) {
    await ctx.step.sleep("nap", input.minutes * 60_000);
    return { woke: true };
  },
});
const other = defineWorkflow({ name: "other", input: z.object({}), run: async () => null });
const signalled = defineWorkflow({
  name: "signalled",
  input: z.object({}),
  // Waits without a deadline: it wakes by a signal only, never by time.
  run: (ctx) => ctx.step.waitForSignal("go"),
});

let db: AnyKysely;
beforeAll(async () => {
  db = await connect("memory://");
  await createDurable({ db, workflows: [] }).migrate();
});
afterAll(() => db?.destroy());
beforeEach(() => resetDurableTables(db));

/** An instance on the file's database (never closed: that would destroy the shared db). */
const instance = (workflows = [nap, other, signalled]) =>
  createDurable({ db, workflows, log: () => {}, testing: true });

describe("the tick report's next wake", () => {
  it("is null with nothing waiting on time", async () => {
    const durable = instance();
    expect(await durable.tick()).toMatchObject({ nextWakeAt: null, nextWakeInMs: null });
    await durable.start(signalled, {}, { id: "s" });
    expect(await durable.tick()).toMatchObject({
      waiting: 1,
      nextWakeAt: null,
      nextWakeInMs: null,
    });
  });

  it("is the earliest wake time by the database clock, and counts down as that clock moves", async () => {
    const durable = instance();
    await durable.start(nap, { minutes: 30 }, { id: "late" });
    await durable.start(nap, { minutes: 10 }, { id: "early" });
    const first = await durable.tick();
    expect(first).toMatchObject({ claimed: 2, waiting: 2 });
    const early = (await durable.status("early"))!;
    expect(first.nextWakeAt).toBe(early.wakeAt);
    expect(first.nextWakeInMs).toBeGreaterThan(9 * 60_000);
    expect(first.nextWakeInMs).toBeLessThanOrEqual(10 * 60_000);

    // Four minutes on by the database clock: the same time, six minutes off.
    await durable.testing.advanceClock("4m");
    const later = await durable.tick();
    expect(later).toMatchObject({ claimed: 0, nextWakeAt: early.wakeAt });
    expect(later.nextWakeInMs).toBeGreaterThan(5 * 60_000);
    expect(later.nextWakeInMs).toBeLessThanOrEqual(6 * 60_000);

    // The early one wakes and completes: the late one is next.
    await durable.testing.advanceClock("6m");
    const woke = await durable.tick();
    expect(woke).toMatchObject({ completed: 1, nextWakeAt: (await durable.status("late"))!.wakeAt });
    expect(woke.nextWakeInMs).toBeGreaterThan(19 * 60_000);
    expect(woke.nextWakeInMs).toBeLessThanOrEqual(20 * 60_000);
  });

  it("counts only the runs of the instance's own workflows", async () => {
    await instance().start(nap, { minutes: 10 }, { id: "n" });
    await instance().tick();
    // Another deployment, which does not know `nap`, has nothing to wake for.
    expect(await instance([other]).tick()).toMatchObject({ nextWakeAt: null, nextWakeInMs: null });
  });
});
