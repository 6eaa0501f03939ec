// Lifecycle hooks (docs/guide/lifecycle.md), on every database: onComplete / onFailure runs started
// by the trigger durable_runs_followups in the transaction that ends a run, on every terminal path
// (docs/sql.md, "Follow-ups"). The webhook deliveries are in webhooks-contract.ts.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, lifecycleInput, type Durable, type LifecycleInput } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

// What each lifecycle run saw, by its own id.
const seen = new Map<string, LifecycleInput>();
const failNext = new Set<string>();

const notify = defineWorkflow({
  name: "notify",
  input: lifecycleInput,
  async run(ctx, ended) {
    await ctx.step.run("note", () => seen.set(ctx.runId, ended));
    if (ended.id.startsWith("hold")) await ctx.step.waitForSignal("release");
    return { noted: ended.status };
  },
});

const job = defineWorkflow({
  name: "job",
  input: z.object({
    mode: z.enum(["ok", "fail", "wait", "continue", "parent", "invoker"]),
    n: z.number().default(0),
  }),
  onComplete: notify,
  onFailure: "notify",
  async run(ctx, input) {
    if (input.mode === "parent") {
      await ctx.step.start("kid", job, { mode: "wait" });
      await ctx.step.waitForSignal("go");
    }
    if (input.mode === "wait") await ctx.step.waitForSignal("go");
    if (input.mode === "invoker") await ctx.step.invoke("kid", job, { mode: "ok", n: 5 });
    if (input.mode === "continue" && input.n < 1) return ctx.continueAsNew({ mode: "continue", n: input.n + 1 });
    return ctx.step.run("work", () => {
      if (input.mode === "fail" || failNext.delete(ctx.runId)) throw new Error(`job ${ctx.runId} broke`);
      return { ok: input.n };
    });
  },
});

const plain = defineWorkflow({
  name: "plain",
  input: z.object({}),
  async run() {
    return "done";
  },
});

const workflows = [notify, job, plain];

export function runLifecycleContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`lifecycle hooks on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    const drain = async (instance: Durable = durable) => {
      for (let i = 0; i < 30 && (await instance.countDue()) > 0; i++) await instance.tick({ budgetMs: 10_000 });
    };
    const followups = async (id: string) =>
      (
        await sql<any>`select id, workflow, status, parent_id, input, followups from durable_runs
                        where parent_id = ${id} and workflow = 'notify' order by created_at, id`.execute(db)
      ).rows;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows,
        secrets: { durable: "t" },
        tickConcurrency: 4,
        defaults: { lease: "2s" },
        log: () => {},
      });
      await durable.migrate();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      seen.clear();
      failNext.clear();
    });
    afterAll(async () => durable?.close());

    it("a completion starts onComplete, a child of the run, with its id, workflow, status and output", async () => {
      await durable.start(job, { mode: "ok", n: 7 }, { id: "ok" });
      await drain();
      const [hook, ...others] = await followups("ok");
      expect(others).toEqual([]);
      expect(hook).toMatchObject({ id: "ok~completed~1~1", status: "completed", parent_id: "ok" });
      expect(hook.followups).toEqual({ followup: true });
      expect(seen.get(hook.id)).toEqual({ id: "ok", workflow: "job", status: "completed", output: { ok: 7 } });
      expect(await durable.list({ parentId: "ok" })).toMatchObject({ runs: [{ id: hook.id, workflow: "notify" }] });
    });

    it("a body that fails starts onFailure with the stored error", async () => {
      await durable.start(job, { mode: "fail" }, { id: "bad" });
      await drain();
      const [hook, ...others] = await followups("bad");
      expect(others).toEqual([]);
      expect(hook).toMatchObject({ status: "completed", parent_id: "bad" });
      expect(seen.get(hook.id)).toMatchObject({
        id: "bad",
        workflow: "job",
        status: "failed",
        error: { message: "job bad broke" },
      });
    });

    it("a workflow without hooks stores no followups and its end starts nothing", async () => {
      await durable.start(plain, {}, { id: "p" });
      await drain();
      const row = (await sql<any>`select status, followups from durable_runs where id = 'p'`.execute(db)).rows[0];
      expect(row).toEqual({ status: "completed", followups: null });
      expect(Number((await sql<any>`select count(*) as n from durable_runs`.execute(db)).rows[0].n)).toBe(1);
    });

    it("cancel, cancelMany and a cascade to children each start onFailure with status cancelled, once", async () => {
      await durable.start(job, { mode: "wait" }, { id: "c1" });
      await durable.start(job, { mode: "wait" }, { id: "c2", tags: ["bulk"] });
      await durable.start(job, { mode: "wait" }, { id: "c3", tags: ["bulk"] });
      await durable.start(job, { mode: "parent" }, { id: "par" });
      await drain();
      const kid = (await sql<any>`select id from durable_runs where parent_id = 'par'`.execute(db)).rows[0].id;
      await durable.cancel("c1", "enough");
      expect(await durable.cancelMany({ tag: "bulk" }, { reason: "bulk" })).toMatchObject({ changed: 2 });
      await durable.cancel("par");
      // A second cancel of an ended run is refused, and starts nothing.
      await expect(durable.cancel("c1")).rejects.toThrow(/already finished/);
      await drain();
      for (const id of ["c1", "c2", "c3", "par", kid]) {
        const hooks = await followups(id);
        expect(hooks, id).toHaveLength(1);
        expect(seen.get(hooks[0].id), id).toMatchObject({ id, status: "cancelled", error: { code: "cancelled" } });
      }
    });

    it("an invoked child and a fork keep their workflow's hooks (durable_suspend_run, durable_fork_run)", async () => {
      await durable.start(job, { mode: "invoker" }, { id: "inv" });
      await drain();
      const kid = (await sql<any>`select id from durable_runs where parent_id = 'inv' and workflow = 'job'`.execute(db))
        .rows[0].id;
      const [kidHook] = await followups(kid);
      expect(seen.get(kidHook.id)).toMatchObject({ id: kid, status: "completed", output: { ok: 5 } });
      expect(await followups("inv")).toHaveLength(1);
      await durable.start(job, { mode: "fail" }, { id: "src" });
      await drain();
      await durable.fork("src", { fromStep: "work", id: "forked" });
      await drain();
      const [forkHook] = await followups("forked");
      expect(seen.get(forkHook.id)).toMatchObject({ id: "forked", status: "failed" });
    });

    it("a deadline passing (durable_end_overdue) starts onFailure", async () => {
      await durable.start(job, { mode: "wait" }, { id: "late", deadline: "1m" });
      await drain();
      await durable.testing.advanceClock("2m");
      await drain();
      expect(await durable.status("late")).toMatchObject({ status: "failed", error: { code: "deadline_exceeded" } });
      const hooks = await followups("late");
      expect(hooks).toHaveLength(1);
      expect(seen.get(hooks[0].id)).toMatchObject({ status: "failed", error: { code: "deadline_exceeded" } });
    });

    it("an unknown version failed by the tick (durable_fail_unknown_versions) starts onFailure", async () => {
      await durable.start(job, { mode: "ok" }, { id: "gone" });
      await sql`update durable_runs set version = 'gone' where id = 'gone'`.execute(db);
      const failing = createDurable({
        db,
        workflows,
        unknownVersion: "fail",
        defaults: { lease: "2s" },
        log: () => {},
      });
      // countDue leaves out versions the instance lacks: the tick that fails them is called directly.
      await failing.tick({ budgetMs: 10_000 });
      await drain();
      expect(await durable.status("gone")).toMatchObject({ status: "failed" });
      const hooks = await followups("gone");
      expect(hooks).toHaveLength(1);
      expect(seen.get(hooks[0].id)).toMatchObject({ id: "gone", status: "failed" });
    });

    it("continueAsNew hands the hooks to the successor: the chain's end starts onComplete once", async () => {
      await durable.start(job, { mode: "continue" }, { id: "chain" });
      await drain();
      expect(await durable.status("chain")).toMatchObject({ status: "completed", continuedAs: "chain~1" });
      expect(await followups("chain")).toEqual([]);
      const hooks = await followups("chain~1");
      expect(hooks).toHaveLength(1);
      expect(seen.get(hooks[0].id)).toMatchObject({ id: "chain~1", status: "completed", output: { ok: 1 } });
    });

    it("batched completions (a tick of 4 at once, chained claims) start one hook per run", async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `b${i}`);
      // startMany's insert (store/insert-runs.ts) stores the followups as start's does.
      await durable.startMany(
        job,
        ids.map(() => ({ mode: "ok" as const })),
        { ids },
      );
      await drain();
      for (const id of ids) expect(await followups(id), id).toHaveLength(1);
    });

    it("a retried run ending again gets its hooks again, under new ids; an end repeated starts nothing", async () => {
      failNext.add("again");
      await durable.start(job, { mode: "ok", n: 2 }, { id: "again" });
      await drain();
      expect(await durable.status("again")).toMatchObject({ status: "failed" });
      await durable.retry("again");
      await drain();
      const hooks = await followups("again");
      expect(hooks.map((hook: any) => seen.get(hook.id)?.status)).toEqual(["failed", "completed"]);
      expect(new Set(hooks.map((hook: any) => hook.id)).size).toBe(2);
      // The same end written again (same status, same fence) inserts the same ids: nothing new.
      await sql`update durable_runs set status = 'running', wake_at = now() where id = 'again'`.execute(db);
      await sql`update durable_runs set status = 'completed', wake_at = null where id = 'again'`.execute(db);
      expect(await followups("again")).toHaveLength(2);
    });

    it("a retried run cancelled again leaves the follow-ups of its earlier end running", async () => {
      // "hold…": the notify run waits for a signal, so it is still open when its parent is cancelled.
      await durable.start(job, { mode: "fail" }, { id: "hold-1" });
      await drain();
      const [first] = await followups("hold-1");
      expect(await durable.status(first.id)).toMatchObject({ status: "waiting" });
      await durable.retry("hold-1");
      await durable.cancel("hold-1");
      expect(await durable.status(first.id)).toMatchObject({ status: "waiting" });
      const hooks = await followups("hold-1");
      expect(hooks.map((hook: any) => hook.input.status)).toEqual(["failed", "cancelled"]);
    });

    it("refuses a hook that is not a workflow, one the instance does not register, one with a key", () => {
      expect(() =>
        defineWorkflow({ name: "x", input: z.object({}), onComplete: 5 as never, run: async () => 1 }),
      ).toThrow(/onComplete is a workflow or a workflow's name/);
      const orphan = defineWorkflow({ name: "orphan", input: z.object({}), onFailure: "nobody", run: async () => 1 });
      expect(() => createDurable({ db, workflows: [orphan] })).toThrow(
        /onFailure names workflow "nobody", which this instance does not register/,
      );
      const keyed = defineWorkflow({
        name: "keyed",
        input: lifecycleInput,
        concurrency: { key: (input) => input.id, limit: 1 },
        run: async () => 1,
      });
      const owner = defineWorkflow({ name: "owner", input: z.object({}), onComplete: keyed, run: async () => 1 });
      expect(() => createDurable({ db, workflows: [owner, keyed] })).toThrow(/declares concurrency/);
      // The built-in delivery workflow is not a hook's: it is not the instance's own to name.
      const deliver = defineWorkflow({
        name: "deliver",
        input: z.object({}),
        onComplete: "durable.webhook",
        run: async () => 1,
      });
      const webhooks = [
        { url: "https://a.example", events: ["run.failed" as const], secret: `whsec_${"a".repeat(40)}` },
      ];
      expect(() => createDurable({ db, workflows: [deliver], webhooks })).toThrow(
        /onComplete names workflow "durable.webhook", which this instance does not register/,
      );
    });
  });
}
