// Composition (docs/guide/composition.md): child runs, races, deadlines and callbacks, on every
// database. The real-server races, kills and chaos are in tests/postgres/compose-*.test.ts.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CallbackNotFoundError,
  ChildRunFailedError,
  createDurable,
  defineWorkflow,
  InvalidInputError,
  RunStateConflictError,
  StepTimeoutError,
  type Durable,
  type DurableOptions,
} from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const effects = new Map<string, number>();
const count = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);
const failOnce = new Set<string>();
const seen = new Map<string, unknown>();

const child = defineWorkflow({
  name: "child",
  input: z.object({ n: z.number(), waitFor: z.string().optional() }),
  output: z.object({ doubled: z.number() }),
  async run(ctx, input) {
    if (input.waitFor) await ctx.step.waitForSignal(input.waitFor);
    const doubled = await ctx.step.run("double", () => {
      count(`${ctx.runId}:double`);
      if (failOnce.delete(ctx.runId)) throw new Error(`child ${ctx.runId} broke`);
      return input.n * 2;
    });
    return { doubled };
  },
});

const parent = defineWorkflow({
  name: "parent",
  input: z.object({ ns: z.array(z.number()), waitFor: z.string().optional(), timeout: z.string().optional() }),
  async run(ctx, input) {
    const outputs = await Promise.all(
      input.ns.map((n, i) =>
        ctx.step.invoke(
          `child-${i}`,
          child,
          { n, waitFor: input.waitFor },
          input.timeout ? { timeout: input.timeout } : {},
        ),
      ),
    );
    return outputs.map((output) => output.doubled);
  },
});

const catcher = defineWorkflow({
  name: "catcher",
  input: z.object({ waitFor: z.string().optional(), timeout: z.string().optional() }),
  async run(ctx, input) {
    try {
      await ctx.step.invoke(
        "kid",
        child,
        { n: 1, waitFor: input.waitFor },
        input.timeout ? { timeout: input.timeout } : {},
      );
      return "completed";
    } catch (error) {
      if (ChildRunFailedError.is(error)) return `${error.childStatus}:${error.childId}`;
      if (StepTimeoutError.is(error)) return "timed out";
      throw error;
    }
  },
});

const onExisting = defineWorkflow({
  name: "on-existing",
  input: z.object({ childId: z.string() }),
  async run(ctx, input) {
    const started = await ctx.step.start("kick", child, { n: 5 }, { id: input.childId });
    const race = await ctx.step.waitForAny("done", { child: { run: started.id }, never: { sleep: "1d" } });
    return race;
  },
});

const racer = defineWorkflow({
  name: "racer",
  input: z.object({ sleep: z.string() }),
  signals: { go: z.object({ n: z.number() }) },
  async run(ctx, input) {
    const first = await ctx.step.waitForAny("race", { go: { signal: "go" }, timeout: { sleep: input.sleep } });
    // A delivery the race did not take is still in the mailbox for this wait.
    const later = first.branch === "timeout" ? await ctx.step.waitForSignal("go", { id: "later" }) : null;
    return { first, later };
  },
});

const approver = defineWorkflow({
  name: "approver",
  input: z.object({ timeout: z.string().default("1h") }),
  async run(ctx, input) {
    const cb = await ctx.step.callback("approve", { timeout: input.timeout, schema: z.object({ ok: z.boolean() }) });
    await ctx.step.run("publish", () => seen.set(`${ctx.runId}:token`, cb.token));
    return ctx.step.waitForCallback(cb);
  },
});

const patient = defineWorkflow({
  name: "patient",
  input: z.object({ hang: z.boolean().default(false) }),
  deadline: "1h",
  async run(ctx, input) {
    if (input.hang) {
      await ctx.step.run("hang", (s) => {
        count(`${ctx.runId}:hang`);
        return new Promise((_, reject) => s.abortSignal.addEventListener("abort", () => reject(s.abortSignal.reason)));
      });
    }
    await ctx.step.waitForSignal("never");
    return "done";
  },
});

const ordered = defineWorkflow({
  name: "ordered",
  input: z.object({}),
  async run(ctx) {
    // A held-back receipt, then two invokes started together: each keeps its place on replay.
    const n = await ctx.step.value("n", () => 3);
    const [a, b] = await Promise.all([ctx.step.invoke("a", child, { n }), ctx.step.invoke("b", child, { n: n + 1 })]);
    return [a.doubled, b.doubled];
  },
});

const solo = defineWorkflow({
  name: "solo",
  input: z.object({ key: z.string() }),
  singleton: { key: (input: { key: string }) => input.key },
  async run(ctx) {
    await ctx.step.waitForSignal("go");
    return "done";
  },
});

// A body held between two steps until the test opens it: `held` is set when it gets there.
const holds = new Map<string, Promise<void>>();
const held = new Set<string>();

const starter = defineWorkflow({
  name: "starter",
  input: z.object({ childId: z.string().optional(), soloKey: z.string().optional() }),
  async run(ctx, input) {
    const hold = holds.get(ctx.runId);
    if (hold) {
      held.add(ctx.runId);
      await hold;
    }
    try {
      const started = input.soloKey
        ? await ctx.step.start("kick", solo, { key: input.soloKey })
        : await ctx.step.start("kick", child, { n: 1 }, input.childId ? { id: input.childId } : {});
      return { started: started.id };
    } catch (error) {
      if (RunStateConflictError.is(error)) return { refused: error.message, activeRunId: error.activeRunId ?? null };
      throw error;
    }
  },
});

const workflows = [child, parent, catcher, onExisting, racer, approver, patient, ordered, solo, starter];

/** `options.encryption`: the same suite with payloads encrypted at rest (tests/contract/encryption-contract.ts). */
export function runCompositionContract(
  label: string,
  open: () => Promise<Kysely<any>>,
  options: Pick<DurableOptions, "encryption"> = {},
) {
  describe(`composition on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    const logs: string[] = [];
    const tick = () => durable.tick({ budgetMs: 10_000 });
    const runRow = async (id: string) =>
      (await sql<any>`select *, wake_at <= durable_now() as due from durable_runs where id = ${id}`.execute(db))
        .rows[0];
    const stepRow = async (runId: string, stepId: string) =>
      (await sql<any>`select * from durable_steps where run_id = ${runId} and step_id = ${stepId}`.execute(db)).rows[0];
    const drain = async () => {
      for (let i = 0; i < 20 && (await durable.countDue()) > 0; i++) await tick();
    };

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows,
        secrets: { durable: "t" },
        defaults: { lease: "2s" },
        log: (message) => logs.push(message),
        ...options,
      });
      await durable.migrate();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      effects.clear();
      failOnce.clear();
    });
    afterAll(async () => durable?.close());

    it("a parent waits on its child with nothing claimed meanwhile, due in the statement ending it", async () => {
      const { id } = await durable.start(parent, { ns: [3], waitFor: "go" }, { id: "p" });
      await tick();
      const waiting = await runRow(id);
      expect(waiting.status).toBe("waiting");
      expect(waiting.wake_at).toEqual(Infinity);
      const kid = await runRow("p/child-0");
      expect(kid).toMatchObject({ parent_id: "p", status: "waiting" });
      // While the child waits, nothing claims the parent.
      await durable.testing.advanceClock("1h");
      expect((await tick()).claimed).toBe(0);
      expect((await runRow(id)).attempts).toBe(1);
      await durable.signal({ runId: "p/child-0", name: "go" });
      expect(await durable.advance("p/child-0")).toBe("completed");
      // The child's completion made the parent due in its own transaction.
      expect((await runRow(id)).due).toBe(true);
      await tick();
      expect(await durable.status(id)).toMatchObject({ status: "completed", output: [6], parentId: null });
      expect((await runRow(id)).attempts).toBe(2);
      expect((await durable.status("p/child-0"))?.parentId).toBe("p");
    });

    it("Promise.all of 100 invokes starts every child in one suspension; each child runs once", async () => {
      const ns = Array.from({ length: 100 }, (_, i) => i);
      const { id } = await durable.start(parent, { ns }, { id: "many" });
      await durable.advance(id);
      expect((await runRow(id)).status).toBe("waiting");
      const kids = (
        await sql<{ n: number }>`select count(*)::int as n from durable_runs where parent_id = 'many'`.execute(db)
      ).rows[0]!.n;
      expect(kids).toBe(100);
      expect((await durable.list({ parentId: id, limit: 200 })).runs).toHaveLength(100);
      await drain();
      const status = await durable.status(id);
      expect(status?.output).toEqual(ns.map((n) => n * 2));
      for (const n of ns) expect(effects.get(`many/child-${n}:double`)).toBe(1);
    });

    it("a child that ended before its parent suspended still wakes it", async () => {
      await durable.start(child, { n: 5 }, { id: "early" });
      await drain();
      expect((await runRow("early")).status).toBe("completed");
      const { id } = await durable.start(onExisting, { childId: "early" }, { id: "late-parent" });
      await durable.advance(id);
      // The race's target had ended: the suspension made the run due at once.
      expect((await runRow(id)).due).toBe(true);
      await tick();
      const status = await durable.status(id);
      expect(status?.output).toEqual({
        branch: "child",
        value: { status: "completed", output: { doubled: 10 }, error: null },
      });
      expect(effects.get("early:double")).toBe(1);
    });

    it("a failed child throws ChildRunFailedError; a retried parent retries it, keeping completed ones", async () => {
      failOnce.add("r/child-2");
      const { id } = await durable.start(parent, { ns: [1, 2, 3, 4] }, { id: "r" });
      await drain();
      const failed = await durable.status(id);
      expect(failed?.status).toBe("failed");
      expect(failed?.error?.code).toBe("child_run_failed");
      expect(failed?.error?.message).toContain("r/child-2");
      await durable.retry(id);
      await drain();
      expect(await durable.status(id)).toMatchObject({ status: "completed", output: [2, 4, 6, 8] });
      for (const n of [0, 1, 3]) expect(effects.get(`r/child-${n}:double`)).toBe(1);
      expect(effects.get("r/child-2:double")).toBe(2);
    });

    it("a body catches a child's failure and a cancelled child; a timeout cancels the child", async () => {
      failOnce.add("c1/kid");
      await durable.start(catcher, {}, { id: "c1" });
      await durable.start(catcher, { waitFor: "go" }, { id: "c2" });
      await durable.start(catcher, { waitFor: "go", timeout: "1m" }, { id: "c3" });
      await drain();
      await durable.cancel("c2/kid", "no longer wanted");
      await durable.testing.advanceClock("2m");
      await drain();
      expect((await durable.status("c1"))?.output).toBe("failed:c1/kid");
      expect((await durable.status("c2"))?.output).toBe("cancelled:c2/kid");
      expect((await durable.status("c3"))?.output).toBe("timed out");
      expect((await durable.status("c3/kid"))?.status).toBe("cancelled");
    });

    it("a Promise.all of invokes fails as soon as one child fails, though a sibling still waits", async () => {
      failOnce.add("all/child-0");
      logs.length = 0;
      await durable.start(parent, { ns: [1, 2], waitFor: "never" }, { id: "all" });
      await drain();
      await durable.signal({ runId: "all/child-0", name: "never" });
      await drain();
      const status = await durable.status("all");
      expect(status?.status).toBe("failed");
      expect(status?.error?.code).toBe("child_run_failed");
      expect((await durable.status("all/child-1"))?.status).toBe("waiting");
      expect(logs.filter((line) => line.includes("settled while suspended"))).toEqual([]);
    });

    it("cancel cascades to children unless asked to keep them", async () => {
      await durable.start(parent, { ns: [1, 2], waitFor: "go" }, { id: "tree" });
      await durable.start(parent, { ns: [1], waitFor: "go" }, { id: "kept" });
      await drain();
      await durable.cancel("tree", "stop");
      expect((await durable.status("tree/child-0"))?.status).toBe("cancelled");
      expect((await durable.status("tree/child-1"))?.status).toBe("cancelled");
      await durable.cancel("kept", { reason: "stop parent only", children: "keep" });
      expect((await durable.status("kept/child-0"))?.status).toBe("waiting");
      await expect(durable.cancel("kept", { children: "drop" as never })).rejects.toThrow(InvalidInputError);
    });

    it("a race: the first branch by the database clock wins; a losing signal stays for a later wait", async () => {
      const { id: fast } = await durable.start(racer, { sleep: "1h" }, { id: "fast" });
      await drain();
      await durable.signal({ runId: fast, name: "go", payload: { n: 1 } });
      await drain();
      expect((await durable.status(fast))?.output).toEqual({ first: { branch: "go", value: { n: 1 } }, later: null });

      const { id: slow } = await durable.start(racer, { sleep: "10m" }, { id: "slow" });
      await drain();
      await durable.testing.advanceClock("11m");
      // Delivered after the sleep won, before the claim that decides: the sleep was first.
      await durable.signal({ runId: slow, name: "go", payload: { n: 2 } });
      await drain();
      const status = await durable.status(slow);
      expect(status?.output).toEqual({ first: { branch: "timeout", value: null }, later: { n: 2 } });
      const race = status?.steps.find((step) => step.id === "race");
      expect(race).toMatchObject({ kind: "any", status: "completed", winner: "timeout" });
      expect(race?.branches?.map((branch) => branch.kind)).toEqual(["signal", "sleep"]);
    });

    it("a race decided leaves nothing that wakes the run again", async () => {
      const { id } = await durable.start(racer, { sleep: "1h" }, { id: "once" });
      await drain();
      await durable.signal({ runId: id, name: "go", payload: { n: 1 } });
      await drain();
      expect((await runRow(id)).status).toBe("completed");
      await durable.testing.advanceClock("2h");
      expect((await tick()).claimed).toBe(0);
      expect((await stepRow(id, "race")).status).toBe("completed");
    });

    it("a callback: delivered once from code, repeats and forgeries refused, nothing changed", async () => {
      const { id } = await durable.start(approver, {}, { id: "approval-of-order-1" });
      await drain();
      const token = seen.get("approval-of-order-1:token") as string;
      // The token carries a random id and a MAC, nothing of the run or the step.
      expect(token).toMatch(/^[\w-]{22}\.[\w-]{22}$/);
      expect(token).not.toContain("approval-of-order-1");
      await expect(durable.completeCallback(token, { ok: "yes" })).rejects.toThrow(InvalidInputError);
      await expect(
        durable.completeCallback(`${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`, { ok: true }),
      ).rejects.toThrow(CallbackNotFoundError);
      await expect(durable.completeCallback("nonsense", { ok: true })).rejects.toThrow(CallbackNotFoundError);
      expect(await durable.completeCallback(token, { ok: true }, { id: "k1" })).toMatchObject({
        delivered: true,
        runId: id,
      });
      expect(await durable.completeCallback(token, { ok: false }, { id: "k1" })).toMatchObject({
        alreadyDelivered: true,
      });
      await expect(durable.completeCallback(token, { ok: false }, { id: "k2" })).rejects.toThrow(RunStateConflictError);
      await drain();
      expect(await durable.status(id)).toMatchObject({ status: "completed", output: { ok: true } });
    });

    it("a callback past its timeout answers null and refuses a delivery", async () => {
      const { id } = await durable.start(approver, { timeout: "5m" }, { id: "cb-late" });
      await drain();
      const token = seen.get("cb-late:token") as string;
      await durable.testing.advanceClock("6m");
      await expect(durable.completeCallback(token, { ok: true })).rejects.toThrow(RunStateConflictError);
      await drain();
      expect(await durable.status(id)).toMatchObject({ status: "completed", output: null });
    });

    it("deadlines: a status read, the tick and the claim end an overdue run; a ttl expires a new one", async () => {
      await durable.start(patient, {}, { id: "read" });
      await durable.start(patient, {}, { id: "ticked" });
      await durable.start(patient, {}, { id: "soon", deadline: "10m" });
      await durable.start(child, { n: 1 }, { id: "unclaimed", ttl: "1m" });
      await durable.start(child, { n: 1 }, { id: "claimed", ttl: "1m" });
      await durable.advance("read");
      await durable.advance("ticked");
      await durable.advance("soon");
      await durable.advance("claimed");
      expect((await durable.status("soon"))?.deadlineAt).not.toBeNull();
      await durable.testing.advanceClock("11m");
      expect((await durable.status("soon"))?.error?.code).toBe("deadline_exceeded");
      await durable.testing.advanceClock("1h");
      expect((await durable.status("read"))?.error?.code).toBe("deadline_exceeded");
      await tick();
      expect((await durable.status("ticked"))?.error?.code).toBe("deadline_exceeded");
      expect((await durable.status("unclaimed"))?.error?.code).toBe("expired");
      expect((await durable.status("claimed"))?.status).toBe("completed");
      // A retried run has no deadline.
      await durable.retry("read");
      await tick();
      expect((await durable.status("read"))?.status).toBe("waiting");
    });

    it("at the deadline the step aborts and nothing is written after it; a child inherits the deadline", async () => {
      await durable.start(patient, { hang: true }, { id: "hung", deadline: "300ms" });
      await durable.start(parent, { ns: [1], waitFor: "go" }, { id: "dp", deadline: "1h" });
      await drain();
      await until(async () => (await durable.status("hung"))?.status === "failed");
      expect((await durable.status("hung"))?.error?.code).toBe("deadline_exceeded");
      expect(effects.get("hung:hang")).toBe(1);
      expect(await stepRow("hung", "hang")).toBeUndefined();
      const parentDeadline = (await runRow("dp")).deadline_at as Date;
      expect((await runRow("dp/child-0")).deadline_at).toEqual(parentDeadline);
    });

    it("a parent retried after passing its deadline retries the child that failed on the same deadline", async () => {
      await durable.start(parent, { ns: [4], waitFor: "go" }, { id: "late", deadline: "10m" });
      await drain();
      await durable.testing.advanceClock("11m");
      await tick();
      expect((await durable.status("late"))?.error?.code).toBe("deadline_exceeded");
      expect((await durable.status("late/child-0"))?.error?.code).toBe("deadline_exceeded");
      await durable.retry("late");
      expect((await durable.status("late/child-0"))?.status).toBe("pending");
      await drain();
      await durable.signal({ runId: "late/child-0", name: "go" });
      await drain();
      expect(await durable.status("late")).toMatchObject({ status: "completed", output: [8], deadlineAt: null });
    });

    it("steps started together behind a held-back receipt keep their order on every replay", async () => {
      logs.length = 0;
      await durable.start(ordered, {}, { id: "ordered" });
      await drain();
      expect(await durable.status("ordered")).toMatchObject({ status: "completed", output: [6, 8] });
      expect((await durable.status("ordered"))?.steps.map((step) => step.id)).toEqual(["n", "a", "b"]);
      expect(logs.filter((line) => line.includes("replayed at position"))).toEqual([]);
    });

    it("ctx.step.start: a parent cancelled before the start starts nothing; a conflict writes no receipt", async () => {
      let open!: () => void;
      holds.set("gated", new Promise<void>((resolve) => (open = resolve)));
      await durable.start(starter, {}, { id: "gated" });
      const advanced = durable.advance("gated");
      await until(() => held.has("gated"));
      await durable.cancel("gated", "stop");
      open();
      await advanced;
      await drain();
      expect(await runRow("gated/kick")).toBeUndefined();
      expect(effects.get("gated/kick:double")).toBeUndefined();

      // An id of another run's input, and a singleton key another run holds: refused in the body.
      await durable.start(child, { n: 7 }, { id: "taken" });
      await durable.start(solo, { key: "k" }, { id: "holder" });
      await durable.start(starter, { childId: "taken" }, { id: "other-input" });
      await durable.start(starter, { soloKey: "k" }, { id: "held-key" });
      await drain();
      expect((await durable.status("other-input"))?.output).toEqual({
        refused:
          'step "kick" could not start child run "taken": a run with that id exists with another workflow or input',
        activeRunId: null,
      });
      expect((await durable.status("held-key"))?.output).toEqual({
        refused: 'step "kick" could not start child run "held-key/kick": run "holder" holds its singleton key',
        activeRunId: "holder",
      });
      for (const id of ["other-input", "held-key"]) expect(await stepRow(id, "kick")).toBeUndefined();
      expect(await runRow("held-key/kick")).toBeUndefined();
      expect((await runRow("taken")).parent_id).toBeNull();

      // The same start with nothing in its way starts the child once, under the parent.
      await durable.start(starter, {}, { id: "free" });
      await drain();
      expect((await durable.status("free"))?.output).toEqual({ started: "free/kick" });
      expect(await runRow("free/kick")).toMatchObject({ parent_id: "free", status: "completed" });
    });

    it("startMany starts runs in one call, idempotent per id, refusing another input under an id", async () => {
      const first = await durable.startMany(child, [{ n: 1 }, { n: 2 }], { ids: ["m1", "m2"] });
      expect(first.map((r) => [r.id, r.created])).toEqual([
        ["m1", true],
        ["m2", true],
      ]);
      const again = await durable.startMany(child, [{ n: 1 }, { n: 3 }], { ids: ["m1", "m3"] });
      expect(again.map((r) => [r.id, r.created])).toEqual([
        ["m1", false],
        ["m3", true],
      ]);
      await expect(durable.startMany(child, [{ n: 9 }], { ids: ["m2"] })).rejects.toThrow(RunStateConflictError);
      await expect(durable.startMany(child, [{ n: "x" } as never])).rejects.toThrow(InvalidInputError);
      await drain();
      expect((await durable.status("m3"))?.output).toEqual({ doubled: 6 });
    });
  });
}
