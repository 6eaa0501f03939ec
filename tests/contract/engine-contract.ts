// The step contract (docs/rules.md), one suite run against every database: PGlite in process, the
// real PostgreSQL server through `pg`, and through Neon's driver.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { claimDueRun } from "@/lib/durable/store";
import {
  createDurable,
  defineWorkflow,
  externalKeyFor,
  FatalStepError,
  InvalidInputError,
  RunStateConflictError,
  WorkflowNotFoundError,
  type Durable,
  type StepInfo,
} from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

/** Counts body executions per `${runId}:${stepId}` and keeps what the bodies saw. */
const calls = new Map<string, number>();
const seen = new Map<string, StepInfo[]>();
const count = (runId: string, stepId: string, s?: StepInfo) => {
  const key = `${runId}:${stepId}`;
  calls.set(key, (calls.get(key) ?? 0) + 1);
  if (s) seen.set(key, [...(seen.get(key) ?? []), { ...s }]);
};
const callsOf = (runId: string, stepId: string) => calls.get(`${runId}:${stepId}`) ?? 0;
const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
const aborts = new Map<string, unknown>();
function gate(name: string) {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  gates.set(name, { promise, open });
  return gates.get(name)!;
}

const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ n: z.number() }),
  output: z.object({ total: z.number(), stamp: z.string() }),
  async run(ctx, input) {
    const a = await ctx.step.run("add-one", (s) => {
      count(ctx.runId, "add-one", s);
      return input.n + 1;
    });
    const b = await ctx.step.tx("record", async (tx, s) => {
      count(ctx.runId, "record", s);
      await sql`insert into contract_effects (run_id, step_id, value) values (${ctx.runId}, 'record', ${a})`.execute(
        tx,
      );
      return a * 2;
    });
    const stamp = await ctx.step.value("stamp", () => {
      count(ctx.runId, "stamp");
      return `stamp-${Math.random()}`;
    });
    return { total: b, stamp };
  },
});

const jsonShapes = defineWorkflow({
  name: "json-shapes",
  input: z.object({}),
  async run(ctx) {
    const first = await ctx.step.run("shape", () => ({
      at: new Date(0),
      big: 10n,
      gone: undefined,
      list: [1, undefined],
    }));
    // Yield after the first receipt so the next invocation answers "shape" from the ledger.
    await ctx.step.run("long", () => "done", { lease: "20s" });
    return { first };
  },
});

const tooLarge = defineWorkflow({
  name: "too-large",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("big", () => "x".repeat(2_000));
    return "unreachable";
  },
});

const duplicateIds = defineWorkflow({
  name: "duplicate-ids",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("same", () => 1);
    try {
      await ctx.step.run("same", () => 2);
    } catch {
      // Catching it changes nothing: the run fails terminally.
    }
    return "swallowed";
  },
});

let mismatchKind: "value" | "run" = "value";
const kindMismatch = defineWorkflow({
  name: "kind-mismatch",
  input: z.object({}),
  async run(ctx) {
    if (mismatchKind === "value") await ctx.step.value("a", () => 1);
    else await ctx.step.run("a", () => 1);
    return "ok";
  },
});

const failing = defineWorkflow({
  name: "failing",
  input: z.object({ catchIt: z.boolean(), fatal: z.boolean().default(false) }),
  async run(ctx, input) {
    try {
      await ctx.step.run(
        "boom",
        () => {
          count(ctx.runId, "boom");
          throw input.fatal ? new FatalStepError("card declined") : new TypeError("provider down");
        },
        { retries: input.fatal ? 5 : 0 },
      );
    } catch (error) {
      if (!input.catchIt) throw error;
      // A saga compensates; on replay the recorded failure is thrown again, never re-executed.
      const compensated = await ctx.step.run("compensate", () => (error as Error).message);
      await ctx.step.run("long", () => "x", { lease: "20s" });
      return { compensated, name: (error as Error).name };
    }
    return "unreachable";
  },
});

const flaky = defineWorkflow({
  name: "flaky",
  input: z.object({ failures: z.number(), retryDelay: z.string() }),
  async run(ctx, input) {
    return ctx.step.run(
      "call",
      (s) => {
        count(ctx.runId, "call", s);
        if (s.attempt <= input.failures) throw new Error(`attempt ${s.attempt} failed`);
        return s.attempt;
      },
      { retries: 3, retryDelay: input.retryDelay, retryBackoff: { factor: 2 } },
    );
  },
});

const stalled = defineWorkflow({
  name: "stalled",
  input: z.object({}),
  async run(ctx) {
    ctx.abortSignal.addEventListener("abort", () => aborts.set(ctx.runId, ctx.abortSignal.reason));
    await ctx.step.run("before", () => "ok");
    const charged = await ctx.step.run("charge", async (s) => {
      count(ctx.runId, "charge", s);
      const held = gates.get(`${ctx.runId}:${s.attempt}`);
      if (held) await held.promise;
      return `charged-${s.attempt}`;
    });
    const after = await ctx.step.run("after", (s) => {
      count(ctx.runId, "after", s);
      return "after";
    });
    return { charged, after };
  },
});

let reorder = false;
const reordering = defineWorkflow({
  name: "reordering",
  input: z.object({}),
  async run(ctx) {
    // Not deterministic on purpose: the second execution swaps two steps and drops a third.
    const order = reorder ? ["b", "a"] : ["a", "b", "c"];
    for (const id of order) await ctx.step.run(id, () => id);
    if (!reorder) await ctx.step.run("long", () => "x", { lease: "20s" });
    return order;
  },
});

// Its only step's outcome is recorded by someone else while the body runs (as a stale ledger
// could make happen): the held-back receipt then loses, and the run replays from the recorded one.
const overtaken = defineWorkflow({
  name: "overtaken",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("a", async () => {
      if (callsOf(ctx.runId, "a") === 0) {
        count(ctx.runId, "a");
        const db = overtakenDb!;
        const { rows } = await sql<{ fence: number }>`select fence from durable_runs where id = ${ctx.runId}`.execute(
          db,
        );
        await sql`
          select durable_record_step(${ctx.runId}, ${rows[0]!.fence}::bigint,
            '{"step_id":"a","seq":0,"kind":"run","status":"completed","attempt":1,"result":"recorded first"}'::jsonb
          )`.execute(db);
      }
      return "mine";
    });
  },
});
let overtakenDb: Kysely<any> | null = null;

// A step id Postgres cannot store (NUL) or that is too long, derived from the input.
const badStepId = defineWorkflow({
  name: "bad-step-id",
  input: z.object({ kind: z.enum(["nul", "long", "empty"]) }),
  async run(ctx, input) {
    await ctx.step.run("fine", () => 1);
    const stepId = { nul: "a\u0000b", long: "x".repeat(256), empty: "" }[input.kind];
    return await ctx.step.run(stepId, () => 2);
  },
});

const workflows = [
  threeSteps,
  jsonShapes,
  tooLarge,
  duplicateIds,
  badStepId,
  kindMismatch,
  failing,
  flaky,
  stalled,
  reordering,
  overtaken,
];

export function runEngineContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`engine contract on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    const logs: string[] = [];

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows,
        secrets: { durable: "test-secret" },
        // A 2 s default lease lets 10 s test budgets claim (a tick needs lease + margin left).
        defaults: { maxResultBytes: 1_000, lease: "2s" },
        log: (message) => logs.push(message),
      });
      await durable.migrate();
      await sql`create table if not exists contract_effects (run_id text, step_id text, value int)`.execute(db);
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      await sql`truncate contract_effects`.execute(db);
      calls.clear();
      seen.clear();
      logs.length = 0;
    });

    const events = async (runId: string) =>
      (
        await sql<{
          kind: string;
          step_id: string | null;
        }>`select kind, step_id from durable_events where run_id = ${runId} order by id`.execute(db)
      ).rows;
    const effects = async (runId: string) =>
      (await sql<{ value: number }>`select value from contract_effects where run_id = ${runId}`.execute(db)).rows;

    it("migrates idempotently", async () => {
      expect(await durable.migrate()).toEqual([]);
    });

    it("starts idempotently on the id, validates input, and refuses a foreign workflow's id", async () => {
      const first = await durable.start(threeSteps, { n: 1 }, { id: "order-1" });
      const again = await durable.start(threeSteps, { n: 1 }, { id: "order-1" });
      expect(first).toMatchObject({ id: "order-1", created: true });
      expect(again).toMatchObject({ id: "order-1", created: false });
      expect(first.statusToken).toBe(again.statusToken);
      expect((await durable.status("order-1"))?.status).toBe("pending");
      // The same id with another input is not the same run: refused, and the stored input stays.
      await expect(durable.start(threeSteps, { n: 999 }, { id: "order-1" })).rejects.toSatisfy(
        RunStateConflictError.is,
      );
      const stored = await sql<{ input: unknown }>`select input from durable_runs where id = 'order-1'`.execute(db);
      expect(stored.rows[0]!.input).toEqual({ n: 1 });

      await expect(durable.start(threeSteps, { n: "x" } as any, { id: "bad" })).rejects.toSatisfy(InvalidInputError.is);
      await expect(durable.start(threeSteps, { n: 1 }, { id: "nul\u0000id" })).rejects.toSatisfy(InvalidInputError.is);
      await expect(durable.start(threeSteps, { n: 1 }, { id: "x".repeat(256) })).rejects.toSatisfy(
        InvalidInputError.is,
      );
      expect(await durable.status("nul\u0000id")).toBeNull();
      await expect(durable.start(jsonShapes, {}, { id: "order-1" })).rejects.toSatisfy(RunStateConflictError.is);
      const stranger = defineWorkflow({ name: "stranger", input: z.object({}), run: async () => null });
      await expect(durable.start(stranger, {}, { id: "s" })).rejects.toSatisfy(WorkflowNotFoundError.is);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from durable_runs`.execute(db);
      expect(rows[0]!.n).toBe(1);
      // Methods work destructured (a handler that takes `start` off the instance).
      const { start } = durable;
      expect((await start(threeSteps, { n: 1 }, { id: "order-1" })).statusToken).toBe(first.statusToken);
      const generated = await durable.start(threeSteps, { n: 2 });
      expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("runs run, tx and value steps to completion, each once, with truthful receipts", async () => {
      await durable.start(threeSteps, { n: 20 }, { id: "r1" });
      const report = await durable.tick({ budgetMs: 10_000 });
      expect(report).toMatchObject({ claimed: 1, completed: 1, waiting: 0, failed: 0, yielded: 0, healed: 0 });
      const status = (await durable.status("r1"))!;
      expect(status.status).toBe("completed");
      expect(status.output).toMatchObject({ total: 42 });
      expect(status.attempts).toBe(1);
      expect(status.error).toBeNull();
      expect(status.wakeAt).toBeNull();
      expect(status.steps.map((s) => [s.id, s.kind, s.status, s.attempt])).toEqual([
        ["add-one", "run", "completed", 1],
        ["record", "tx", "completed", 1],
        ["stamp", "value", "completed", 1],
      ]);
      expect(status.steps[0]!.externalKey).toBe(externalKeyFor("r1", "add-one"));
      expect(seen.get("r1:add-one")![0]).toMatchObject({
        attempt: 1,
        isReclaim: false,
        externalKey: externalKeyFor("r1", "add-one"),
      });
      expect(await effects("r1")).toEqual([{ value: 21 }]);
      // A terminal run is never claimed again and never re-executes a step.
      expect((await durable.tick({ budgetMs: 5_000 })).claimed).toBe(0);
      expect(await durable.advance("r1", { budgetMs: 5_000 })).toBeNull();
      expect([callsOf("r1", "add-one"), callsOf("r1", "record"), callsOf("r1", "stamp")]).toEqual([1, 1, 1]);
    });

    it("yields when the next step's lease does not fit the budget, and replays from receipts", async () => {
      await durable.start(jsonShapes, {}, { id: "j1" });
      const first = await durable.tick({ budgetMs: 10_000 });
      // "long" needs 20 s + 1 s margin: the run is given back, due now, and not claimed again this tick.
      expect(first).toMatchObject({ claimed: 1, yielded: 1, completed: 0 });
      const parked = (await durable.status("j1"))!;
      expect(parked.status).toBe("pending");
      expect(parked.wakeAt).not.toBeNull();
      expect((await events("j1")).map((e) => e.kind)).toEqual(["budget.yield"]);
      const second = await durable.tick({ budgetMs: 30_000 });
      expect(second).toMatchObject({ claimed: 1, completed: 1 });
      const done = (await durable.status("j1"))!;
      // The first execution saw exactly what the replay saw: JSON round trip on both.
      expect(done.output).toEqual({ first: { at: "1970-01-01T00:00:00.000Z", big: "10", list: [1, null] } });
      expect(done.attempts).toBe(2);
    });

    it("a tick with a budget below the default lease plus margin claims nothing", async () => {
      await durable.start(threeSteps, { n: 1 }, { id: "tiny" });
      expect(await durable.tick({ budgetMs: 2_500 })).toMatchObject({ claimed: 0 });
      expect(await durable.tick({ budgetMs: 3_500 })).toMatchObject({ claimed: 1 });
    });

    it("fails a step whose result is over the size limit, clearly", async () => {
      await durable.start(tooLarge, {}, { id: "big" });
      await durable.tick({ budgetMs: 10_000 });
      const status = (await durable.status("big"))!;
      expect(status.status).toBe("failed");
      expect(status.error?.code).toBe("result_too_large");
      expect(status.steps[0]).toMatchObject({ id: "big", status: "failed" });
    });

    it("fails the run on a duplicate step id even when the body catches it", async () => {
      await durable.start(duplicateIds, {}, { id: "dup" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ failed: 1 });
      const status = (await durable.status("dup"))!;
      expect(status).toMatchObject({ status: "failed", error: { code: "duplicate_step_id" } });
    });

    it("fails the run at once on a step id that cannot be stored, instead of giving up on every advance", async () => {
      for (const kind of ["nul", "long", "empty"] as const) {
        const id = `${kind}-step`;
        await durable.start(badStepId, { kind }, { id });
        expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, failed: 1 });
        const status = (await durable.status(id))!;
        expect(status).toMatchObject({ status: "failed", error: { code: "invalid_input" } });
        expect(status.error?.message).toContain("step id");
        expect(status.steps.map((step) => step.id)).toEqual(["fine"]);
      }
      // Nothing is left due: the runs are terminal, not pending for ever.
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 0 });
    });

    it("fails the run when a step id comes back as another kind", async () => {
      mismatchKind = "value";
      await durable.start(kindMismatch, {}, { id: "km" });
      // Record "a" as a value step, then make the run due again as if the body changed.
      const claim = await claimDueRun(db, { workflows: ["kind-mismatch"], leaseMs: 5_000 });
      await sql`
        select durable_record_step(${"km"}, ${claim!.run.fence}::bigint,
          '{"step_id":"a","seq":0,"kind":"value","status":"completed","attempt":1,"result":1}'::jsonb
        )`.execute(db);
      await sql`select durable_release_run(${"km"}, ${claim!.run.fence}::bigint, null)`.execute(db);
      mismatchKind = "run";
      await durable.tick({ budgetMs: 10_000 });
      expect(await durable.status("km")).toMatchObject({ status: "failed", error: { code: "step_kind_mismatch" } });
    });

    it("fails the run with the step's error when retries are spent, and never re-executes it", async () => {
      await durable.start(failing, { catchIt: false }, { id: "f1" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ failed: 1 });
      const status = (await durable.status("f1"))!;
      expect(status.status).toBe("failed");
      expect(status.error).toEqual({ code: "error", message: "provider down" });
      expect(status.steps[0]).toMatchObject({
        id: "boom",
        status: "failed",
        attempt: 1,
        error: { message: "provider down" },
      });
      expect(callsOf("f1", "boom")).toBe(1);
    });

    it("throws a failed step's recorded error into the body on replay so a saga can compensate", async () => {
      await durable.start(failing, { catchIt: true, fatal: true }, { id: "f2" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ yielded: 1 });
      expect(await durable.tick({ budgetMs: 30_000 })).toMatchObject({ completed: 1 });
      const status = (await durable.status("f2"))!;
      // FatalStepError: no retries spent although 5 were allowed.
      expect(status.output).toEqual({ compensated: "card declined", name: "FatalStepError" });
      expect(callsOf("f2", "boom")).toBe(1);
      expect(status.steps.find((s) => s.id === "boom")).toMatchObject({ status: "failed", attempt: 1 });
    });

    it("retries in process when the delay fits, with the attempt counted on the row", async () => {
      await durable.start(flaky, { failures: 2, retryDelay: "10ms" }, { id: "fl1" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ completed: 1 });
      const status = (await durable.status("fl1"))!;
      expect(status.output).toBe(3);
      expect(status.steps[0]).toMatchObject({ status: "completed", attempt: 3 });
      expect(seen.get("fl1:call")!.map((s) => [s.attempt, s.isReclaim, s.externalKey])).toEqual([
        [1, false, externalKeyFor("fl1", "call")],
        [2, false, externalKeyFor("fl1", "call")],
        [3, false, externalKeyFor("fl1", "call")],
      ]);
    });

    it("parks the run for a retry delay that does not fit, due at the stored time", async () => {
      await durable.start(flaky, { failures: 1, retryDelay: "1h" }, { id: "fl2" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ waiting: 1 });
      const waiting = (await durable.status("fl2"))!;
      expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "retry", name: "call" } });
      expect(new Date(waiting.wakeAt!).getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
      expect((await durable.tick({ budgetMs: 10_000 })).claimed).toBe(0);
      await durable.testing.advanceClock("61m");
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ completed: 1 });
      expect((await durable.status("fl2"))!.steps[0]).toMatchObject({ status: "completed", attempt: 2 });
    });

    it("heals a run whose lease ran out when its status is read, once, and the next owner sees a reclaim", async () => {
      await durable.start(stalled, {}, { id: "h1" });
      // A dead owner: claimed with a 2 s lease, then nothing.
      const dead = await claimDueRun(db, { workflows: ["stalled"], leaseMs: 2_000 });
      expect(dead?.run.id).toBe("h1");
      expect((await durable.status("h1"))!.status).toBe("running");
      await durable.testing.advanceClock("3s");
      const reads = await Promise.all([durable.status("h1"), durable.status("h1"), durable.status("h1")]);
      expect(reads.map((r) => r!.status)).toEqual(["pending", "pending", "pending"]);
      expect((await events("h1")).filter((e) => e.kind === "heal")).toHaveLength(1);
      // The dead owner's fence is stale: its late write is refused.
      const late = await sql<{ r: any }>`
        select durable_record_step('h1', ${dead!.run.fence}::bigint,
          '{"step_id":"before","seq":0,"kind":"run","status":"completed","attempt":1,"result":"late"}'::jsonb
        ) as r`.execute(db);
      expect(late.rows[0]!.r).toEqual({ owned: false, runStatus: "pending" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ completed: 1 });
      // "before" and "charge"... only steps reached before the first new receipt are reclaims.
      const before = (await durable.status("h1"))!;
      expect(before.steps.map((s) => [s.id, s.attempt])).toEqual([
        ["before", 2],
        ["charge", 1],
        ["after", 1],
      ]);
      expect(seen.get("h1:after")![0]).toMatchObject({ isReclaim: false, attempt: 1 });
    });

    it("refuses a stalled owner's late result while the new owner sees attempt 2 and isReclaim", async () => {
      await durable.start(stalled, {}, { id: "st1" });
      const held = gate("st1:1");
      const owner = durable.tick({ budgetMs: 10_000 });
      await until(() => callsOf("st1", "charge") === 1);
      // The first owner is stuck inside "charge" past its lease (budget 10 s + margin 1 s).
      await durable.testing.advanceClock("12s");
      const second = await durable.tick({ budgetMs: 10_000 });
      expect(second).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
      expect(seen.get("st1:charge")![1]).toMatchObject({ attempt: 2, isReclaim: true });
      held.open();
      const first = await owner;
      expect(first).toMatchObject({ claimed: 1, completed: 0 });
      // The stale owner stopped quietly: its abortSignal fired, nothing it wrote landed.
      expect(aborts.get("st1")).toBe("lease lost");
      const status = (await durable.status("st1"))!;
      expect(status.output).toEqual({ charged: "charged-2", after: "after" });
      expect(status.steps.find((s) => s.id === "charge")).toMatchObject({ attempt: 2 });
      // Its late outcome parks on the recorded one and is reported.
      expect((await events("st1")).map((e) => e.kind)).toEqual(["heal", "step.outcome-conflict"]);
      expect(callsOf("st1", "after")).toBe(1);
    });

    it("logs a step replayed at a new position and reports a step that vanished on the run", async () => {
      reorder = false;
      await durable.start(reordering, {}, { id: "ro" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ yielded: 1 });
      reorder = true;
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ completed: 1 });
      expect(logs.filter((l) => /step "b" replayed at position 0, recorded at 1/.test(l))).toHaveLength(1);
      const status = (await durable.status("ro"))!;
      expect(status.warnings).toEqual([
        'step "c" has a receipt but was not reached by the execution that completed the run',
      ]);
    });

    it("a held-back last receipt beaten by a recorded outcome never completes the run on its own value", async () => {
      overtakenDb = db;
      await durable.start(overtaken, {}, { id: "ov" });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, completed: 0, yielded: 1 });
      expect(await durable.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, completed: 1 });
      expect((await durable.status("ov"))!.output).toBe("recorded first");
    });

    it("leaves runs of workflows it does not know due for an instance that knows them", async () => {
      await durable.start(threeSteps, { n: 1 }, { id: "foreign" });
      const other = createDurable({
        db,
        workflows: [jsonShapes],
        secrets: { durable: "x" },
        defaults: { lease: "2s" },
        log: () => {},
      });
      expect((await other.tick({ budgetMs: 10_000 })).claimed).toBe(0);
      const seenByOther = (await other.status("foreign"))!;
      expect(seenByOther.status).toBe("pending");
      expect(seenByOther.warnings.join()).toMatch(/not registered/);
      expect((await other.list()).runs[0]!.warnings.join()).toMatch(/not registered/);
      expect((await durable.list()).runs[0]!.warnings).toEqual([]);
      expect((await durable.tick({ budgetMs: 10_000 })).completed).toBe(1);
    });

    it("lists runs newest first with filters and a cursor", async () => {
      for (let i = 0; i < 5; i++) await durable.start(threeSteps, { n: i }, { id: `l${i}` });
      await durable.start(jsonShapes, {}, { id: "lj" });
      const page1 = await durable.list({ limit: 2, workflow: "three-steps" });
      expect(page1.runs.map((r) => r.id)).toEqual(["l4", "l3"]);
      const page2 = await durable.list({ limit: 2, workflow: "three-steps", cursor: page1.nextCursor! });
      expect(page2.runs.map((r) => r.id)).toEqual(["l2", "l1"]);
      const page3 = await durable.list({ limit: 2, workflow: "three-steps", cursor: page2.nextCursor! });
      expect(page3).toMatchObject({ runs: [{ id: "l0" }], nextCursor: null });
      expect((await durable.list({ status: "pending" })).runs).toHaveLength(6);
      expect((await durable.list({ status: "completed" })).runs).toHaveLength(0);
      await expect(durable.list({ status: "nope" as any })).rejects.toSatisfy(InvalidInputError.is);
      await expect(durable.list({ cursor: "garbage" })).rejects.toSatisfy(InvalidInputError.is);
    });
  });
}
