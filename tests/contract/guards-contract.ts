// Guards users can trust and signals as a mailbox (docs/rules.md, rules 11, 16, 18), one suite run
// on every database. What needs two connections at once lives in tests/postgres/guards.test.ts.
import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, RunStateConflictError, StepLeaseLostError } from "@/lib/durable";
import { claimDueRun } from "@/lib/durable/store";
import { resetDurableTables } from "../helpers/databases";

const observed = new Map<string, unknown>();
let durableForBodies: Durable | undefined;

const longLease = defineWorkflow({
  name: "long-lease",
  input: z.object({ kind: z.enum(["run", "poll"]) }),
  async run(ctx, input) {
    await ctx.step.run("before", () => 1);
    try {
      if (input.kind === "run") await ctx.step.run("export", () => "ran", { lease: "2m" });
      else
        await ctx.step.waitFor("export", { poll: () => 1, ready: () => true, every: "1s", timeout: "1h", lease: "2m" });
    } catch (error) {
      observed.set(`${ctx.runId}:caught`, (error as Error).message);
      throw error;
    }
    return "unreachable";
  },
});

const staleBeat = defineWorkflow({
  name: "stale-beat",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("beat", async (s) => {
      // The lease (the invocation's deadline plus the margin) runs out while the body runs.
      await durableForBodies!.testing.advanceClock("10m");
      try {
        await s.heartbeat();
        return "owned";
      } catch (error) {
        observed.set(`${ctx.runId}:beat`, error);
        return "refused";
      }
    });
  },
});

// Waits on "message" three times, each wait with its own step id: an agent loop's inbox.
const inbox = defineWorkflow({
  name: "inbox",
  input: z.object({}),
  signals: { message: z.object({ text: z.string() }) },
  async run(ctx) {
    const seen: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const message = await ctx.step.waitForSignal<{ text: string }>("message", { id: `message-${i}`, timeout: "1d" });
      seen.push(message?.text ?? "(timed out)");
      await ctx.step.run(`handle-${i}`, () => seen.length);
    }
    return seen;
  },
});

const strayNames = defineWorkflow({
  name: "stray-names",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.waitForSignal("wanted");
  },
});

const bigResult = defineWorkflow({
  name: "big-result",
  input: z.object({}),
  async run(ctx) {
    // Random hex: 80,000 bytes of JSON that no compression makes small.
    const big = await ctx.step.run("big", () => randomBytes(40_000).toString("hex"));
    const small = await ctx.step.run("small", () => "y");
    await ctx.step.sleep("nap", "1h");
    return { length: big.length, hex: /^[0-9a-f]+$/.test(big), small };
  },
});

const workflows = [longLease, staleBeat, inbox, strayNames, bigResult];

export function runGuardsContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`guards and the mailbox on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    const logs: string[] = [];
    const tick = (budgetMs = 10_000) => durable.tick({ budgetMs });
    const text = (t: string) => ({ text: t });

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows,
        secrets: { durable: "test-secret" },
        // Budgets of 10 s and a 2 s default lease, like the other contract suites.
        defaults: { lease: "2s", budget: "10s" },
        log: (message) => logs.push(message),
      });
      durableForBodies = durable;
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      observed.clear();
      logs.length = 0;
    });

    it("fails a step whose lease can never fit the budget at once, naming step, lease and budget", async () => {
      for (const kind of ["run", "poll"] as const) {
        const id = `lease-${kind}`;
        await durable.start(longLease, { kind }, { id });
        // Before, the run was given back and claimed again for ever: one tick fails it now.
        expect(await tick()).toMatchObject({ claimed: 1, failed: 1, yielded: 0 });
        const status = (await durable.status(id))!;
        expect(status).toMatchObject({ status: "failed", error: { code: "invalid_input" } });
        for (const part of ['step "export"', "120000 ms", "10000 ms"]) expect(status.error?.message).toContain(part);
        expect(status.steps.find((step) => step.id === "export")).toMatchObject({ status: "failed" });
        expect(observed.get(`${id}:caught`)).toBe(status.error?.message);
      }
    });

    it("says once in the log, and in every report, that a tick budget below the lease claims nothing", async () => {
      await durable.start(bigResult, {}, { id: "idle" });
      const first = await tick(2_500);
      const second = await tick(2_500);
      expect(first).toMatchObject({ claimed: 0 });
      expect(first.warnings[0]).toMatch(/tick budget of 2500 ms claims nothing/);
      expect(second.warnings).toEqual(first.warnings);
      expect(logs.filter((line) => line.includes("claims nothing"))).toHaveLength(1);
      expect((await tick()).warnings).toEqual([]);
    });

    it("refuses a heartbeat once the lease has ended, before anyone healed the run", async () => {
      await durable.start(staleBeat, {}, { id: "beat" });
      await tick();
      expect(StepLeaseLostError.is(observed.get("beat:beat"))).toBe(true);
      expect(String((observed.get("beat:beat") as Error).message)).toContain("lease expired");
      // The owner stopped: it wrote nothing after its lease, and a later claim finishes the run.
      expect((await durable.status("beat"))!.steps).toEqual([]);
    });

    it("moves the clock only in tests or on an instance made for it", async () => {
      vi.stubEnv("NODE_ENV", "production");
      try {
        const production = createDurable({ db, workflows });
        await expect(production.testing.advanceClock("1h")).rejects.toSatisfy(RunStateConflictError.is);
        const forTests = createDurable({ db, workflows, testing: true });
        await forTests.testing.advanceClock("1h");
      } finally {
        vi.unstubAllEnvs();
      }
      const { rows } = await sql<{
        shift: string;
      }>`select extract(epoch from shift)::int as shift from durable_clock`.execute(db);
      expect(Number(rows[0]!.shift)).toBe(3600);
    });

    it("reads and lists a run that waits with no deadline (wake time infinity) as waiting for ever", async () => {
      await durable.start(strayNames, {}, { id: "forever" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect(await durable.status("forever")).toMatchObject({ status: "waiting", wakeAt: null });
      expect((await durable.list()).runs).toMatchObject([{ id: "forever", status: "waiting", wakeAt: null }]);
    });

    it("tells whether a run is due without claiming it", async () => {
      await durable.start(bigResult, {}, { id: "due" });
      expect(await durable.inspect("due")).toMatchObject({ due: true, status: { status: "pending" } });
      await tick();
      expect(await durable.inspect("due")).toMatchObject({ due: false, status: { status: "waiting" } });
      await durable.testing.advanceClock("1h");
      expect(await durable.inspect("due")).toMatchObject({ due: true });
      expect(await durable.inspect("missing")).toBeNull();
    });

    it("takes one delivery per wait, oldest first: before the waits, while parked, and repeats by id", async () => {
      await durable.signal({ runId: "missing", name: "message" }).catch(() => {});
      await durable.start(inbox, {}, { id: "inbox" });
      // Two deliveries before the first wait; a repeat of the first by its delivery id.
      await durable.signal({ runId: "inbox", name: "message", payload: text("one"), id: "d-1" });
      await durable.signal({ runId: "inbox", name: "message", payload: text("two") });
      expect(await durable.signal({ runId: "inbox", name: "message", payload: text("one again"), id: "d-1" })).toEqual({
        ok: true,
        signalled: false,
        alreadyDelivered: true,
      });
      // One invocation takes both from what it claimed, then parks on the third wait.
      expect(await tick()).toMatchObject({ waiting: 1 });
      expect(await durable.status("inbox")).toMatchObject({ waitingFor: { kind: "signal", name: "message" } });
      expect(await tick()).toMatchObject({ claimed: 0 }); // nothing wakes it but a delivery
      await durable.signal({ runId: "inbox", name: "message", payload: text("three"), id: "d-3" });
      await durable.signal({ runId: "inbox", name: "message", payload: text("four") });
      expect(await tick()).toMatchObject({ completed: 1 });
      expect((await durable.status("inbox"))!.output).toEqual(["one", "two", "three"]);
      const { rows } = await sql<{ name: string; taken_by: string | null; delivery_id: string | null }>`
        select name, taken_by, delivery_id from durable_signals where run_id = 'inbox' order by seq`.execute(db);
      expect(rows).toEqual([
        { name: "message", taken_by: "message-1", delivery_id: "d-1" },
        { name: "message", taken_by: "message-2", delivery_id: null },
        { name: "message", taken_by: "message-3", delivery_id: "d-3" },
        { name: "message", taken_by: null, delivery_id: null },
      ]);
      // Finished: a repeat is still a repeat; a new delivery is refused.
      expect(await durable.signal({ runId: "inbox", name: "message", payload: text("x"), id: "d-3" })).toMatchObject({
        alreadyDelivered: true,
      });
      await expect(durable.signal({ runId: "inbox", name: "message", payload: text("x") })).rejects.toSatisfy(
        RunStateConflictError.is,
      );
    });

    it("bounds what a claim loads: at most 100 deliveries, results over 64 KiB read when reached", async () => {
      await durable.start(strayNames, {}, { id: "strays" });
      for (let i = 0; i < 150; i++) await durable.signal({ runId: "strays", name: `stray-${i}`, payload: { i } });
      await durable.signal({ runId: "strays", name: "wanted", payload: "found" });
      const claim = await claimDueRun(db, { workflows: ["stray-names"], leaseMs: 5_000 });
      expect(claim!.mailbox).toHaveLength(100);
      expect(claim!.mailbox[0]).toMatchObject({ name: "stray-0", payload: { i: 0 } });
      // Give the claim back as if its invocation died; the next claim heals and finishes it: the
      // wanted delivery, beyond the 100 loaded, is taken by the claim that wakes the parked wait.
      await durable.testing.advanceClock("1m");
      for (let i = 0; i < 4; i++) await tick();
      expect(await durable.status("strays")).toMatchObject({ status: "completed", output: "found" });

      await durable.start(bigResult, {}, { id: "big" });
      expect(await tick()).toMatchObject({ waiting: 1 });
      await durable.testing.advanceClock("1h");
      const woken = await claimDueRun(db, { workflows: ["big-result"], leaseMs: 5_000 });
      const big = woken!.steps.find((step) => step.stepId === "big")!;
      expect(big).toMatchObject({ result: null, resultOmitted: true, status: "completed" });
      expect(woken!.steps.find((step) => step.stepId === "small")).toMatchObject({ result: "y", resultOmitted: false });
      await durable.testing.advanceClock("1m");
      for (let i = 0; i < 3; i++) await tick();
      expect(await durable.status("big")).toMatchObject({
        status: "completed",
        output: { length: 80_000, hex: true, small: "y" },
      });
    });
  });
}
