// Operations on PGlite (docs/guide/runs.md, "Tags and metadata", "Finding runs", "Acting on many
// runs", "Forking a run"): tags and metadata on the status and in list filters, cursor paging that
// stays stable while runs change, cancelMany and retryMany in batches, and fork from a step.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createDurable,
  type Durable,
  defineWorkflow,
  externalKeyFor,
  InvalidInputError,
  RunStateConflictError,
} from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { resetDurableTables } from "../helpers/databases";

const runs = { a: 0, b: 0, c: 0 };
let failC = true;

const tagged = defineWorkflow({
  name: "tagged",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    ctx.setMetadata({ stage: "starting", n: input.n });
    await ctx.step.run("one", () => input.n);
    ctx.setMetadata({ stage: "sleeping" });
    await ctx.step.sleep("nap", "1h");
    ctx.setMetadata({ stage: "done" });
    return input.n;
  },
});

const pipeline = defineWorkflow({
  name: "pipeline",
  input: z.object({ order: z.string() }),
  async run(ctx, input) {
    const a = await ctx.step.run("a", (s) => {
      runs.a++;
      return { order: input.order, key: s.externalKey };
    });
    const b = await ctx.step.value("b", () => {
      runs.b++;
      return `${a.order}-b`;
    });
    ctx.setMetadata({ reached: "c" });
    const c = await ctx.step.run("c", (s) => {
      runs.c++;
      if (failC) throw new Error("c failed");
      return { b, key: s.externalKey };
    });
    return c;
  },
});

const pending = defineWorkflow({
  name: "pending",
  input: z.object({ n: z.number() }),
  async run(ctx) {
    await ctx.step.waitForSignal("go");
    return "went";
  },
});

const failing = defineWorkflow({
  name: "failing",
  input: z.object({ n: z.number() }),
  async run() {
    throw new Error("always");
  },
});

const metadataRules = defineWorkflow({
  name: "metadata-rules",
  input: z.object({}),
  async run(ctx) {
    const refused: string[] = [];
    // A Date is an object whose JSON is a string: spread into the metadata it would store its characters.
    for (const patch of [[1], "text", null, { big: "x".repeat(5000) }, { nul: "a\u0000b" }, new Date(0)]) {
      try {
        ctx.setMetadata(patch as never);
      } catch (error) {
        refused.push(InvalidInputError.is(error) ? "invalid" : String(error));
      }
    }
    ctx.setMetadata({ kept: true });
    return refused;
  },
});

// Under 4 KiB at every call of its first execution, but the claim's stored value (a small, b 2 KiB)
// merged with the first patch (a 3 KiB) is over it: a replay must answer each call as the first did.
const metadataReplay = defineWorkflow({
  name: "metadata-replay",
  input: z.object({}),
  async run(ctx) {
    ctx.setMetadata({ a: "x".repeat(3000) });
    await ctx.step.run("one", () => 1);
    ctx.setMetadata({ a: "small" });
    ctx.setMetadata({ b: "y".repeat(2000) });
    await ctx.step.sleep("nap", "1h");
    ctx.setMetadata({ c: 1 });
    return "ok";
  },
});

const parent = defineWorkflow({
  name: "parent",
  input: z.object({}),
  async run(ctx) {
    const child = await ctx.step.start("kid", pending, { n: 1 });
    await ctx.step.run("after", () => child.id);
    return "ok";
  },
});

const all = [tagged, pipeline, pending, failing, metadataRules, metadataReplay, parent];

describe("operations (PGlite)", () => {
  let db: Kysely<any>;
  let durable: Durable;
  const count = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from durable_runs`.execute(db)).rows[0]!.n;

  beforeAll(async () => {
    db = await connect("memory://");
    durable = createDurable({ db, workflows: all, log: () => {} });
    await durable.migrate();
  });
  afterAll(() => durable.close());
  beforeEach(async () => {
    await resetDurableTables(db);
    Object.assign(runs, { a: 0, b: 0, c: 0 });
    failC = true;
  });

  it("stores tags at start and shows them, with the metadata the body set, on status and list", async () => {
    await durable.start(tagged, { n: 1 }, { id: "t1", tags: ["customer:acme", "batch-7", "customer:acme"] });
    await durable.startMany(tagged, [{ n: 2 }, { n: 3 }], { ids: ["t2", "t3"], tags: ["batch-8"] });
    expect((await durable.status("t1"))!.tags).toEqual(["customer:acme", "batch-7"]);
    expect((await durable.status("t1"))!.metadata).toEqual({});
    await durable.tick({ budgetMs: 40_000 });
    // Parked on the sleep: the suspension carried the patches set since the receipt of "one".
    const asleep = (await durable.status("t1"))!;
    expect(asleep).toMatchObject({ status: "waiting", metadata: { stage: "sleeping", n: 1 }, forkedFrom: null });
    const page = await durable.list({ tag: "batch-8" });
    expect(page.runs.map((run) => run.id).sort()).toEqual(["t2", "t3"]);
    expect(page.runs[0]).toMatchObject({ tags: ["batch-8"], metadata: { stage: "sleeping" } });
    expect((await durable.list({ metadata: { n: 3 } })).runs.map((run) => run.id)).toEqual(["t3"]);
    expect((await durable.list({ metadata: { stage: "sleeping", n: 2 }, tag: "batch-8" })).runs).toHaveLength(1);
    await durable.testing.advanceClock("1h");
    await durable.tick({ budgetMs: 40_000 });
    // No step after the last patch: the end carried it.
    expect((await durable.status("t1"))!).toMatchObject({ status: "completed", metadata: { stage: "done", n: 1 } });
    expect((await durable.list({ metadata: { stage: "done" } })).runs).toHaveLength(3);
  });

  it("refuses bad tags and bad metadata patches clearly, writing nothing", async () => {
    const bad: unknown[] = [
      Array.from({ length: 11 }, (_, n) => `t${n}`),
      ["x".repeat(65)],
      [""],
      [42],
      "one-tag",
      ["a\u0000b"],
    ];
    for (const tags of bad) {
      await expect(durable.start(tagged, { n: 1 }, { tags: tags as string[] })).rejects.toThrow(InvalidInputError);
      await expect(durable.startMany(tagged, [{ n: 1 }], { tags: tags as string[] })).rejects.toThrow(
        InvalidInputError,
      );
    }
    expect(await count()).toBe(0);
    await durable.start(metadataRules, {}, { id: "m" });
    await durable.tick({ budgetMs: 40_000 });
    const status = (await durable.status("m"))!;
    expect(status.output).toEqual(["invalid", "invalid", "invalid", "invalid", "invalid", "invalid"]);
    expect(status.metadata).toEqual({ kept: true });
  });

  it("a replay checks the metadata budget as the first execution did, not against the stored final value", async () => {
    await durable.start(metadataReplay, {}, { id: "mr" });
    await durable.tick({ budgetMs: 40_000 });
    const asleep = (await durable.status("mr"))!;
    expect(asleep.status).toBe("waiting");
    expect(asleep.metadata).toEqual({ a: "small", b: "y".repeat(2000) });
    await durable.testing.advanceClock("1h");
    await durable.tick({ budgetMs: 40_000 });
    const done = (await durable.status("mr"))!;
    expect(done.error).toBeNull();
    expect(done).toMatchObject({
      status: "completed",
      output: "ok",
      metadata: { a: "small", b: "y".repeat(2000), c: 1 },
    });
  });

  it("filters by status, workflow, version, parent and creation time, and refuses bad filters", async () => {
    await durable.start(pending, { n: 1 }, { id: "p1" });
    const between = new Date((await durable.status("p1"))!.createdAt);
    await durable.start(failing, { n: 1 }, { id: "f1" });
    await durable.start(parent, {}, { id: "parent-1" });
    await durable.tick({ budgetMs: 40_000 });
    const ids = async (options: Parameters<Durable["list"]>[0]) =>
      (await durable.list(options)).runs.map((run) => run.id).sort();
    expect(await ids({ status: "failed" })).toEqual(["f1"]);
    expect(await ids({ status: ["failed", "completed"] })).toEqual(["f1", "parent-1"]);
    expect(await ids({ workflow: "pending" })).toEqual(["p1", "parent-1/kid"]);
    expect(await ids({ parentId: "parent-1" })).toEqual(["parent-1/kid"]);
    expect(await ids({ createdAfter: between })).toEqual(["f1", "parent-1", "parent-1/kid"]);
    expect(await ids({ createdBefore: new Date(between.getTime() + 1), workflow: "pending" })).toEqual(["p1"]);
    expect(await ids({ createdAfter: between.toISOString(), createdBefore: between })).toEqual([]);
    expect(await ids({ version: "3" })).toEqual([]);
    const bad: unknown[] = [
      { status: "sleeping" },
      { status: [] },
      { status: ["failed", "sleeping"] },
      { workflow: ["pending", "failing"] },
      { tag: ["a", "b"] },
      { tag: "x".repeat(65) },
      { parentId: "" },
      { metadata: [1] },
      { metadata: "x" },
      { createdAfter: "yesterday" },
      { createdBefore: new Date(Number.NaN) },
      { stauts: "failed" },
      { cursor: "garbage" },
      { limit: 0 },
    ];
    for (const options of bad) await expect(durable.list(options as never)).rejects.toThrow(InvalidInputError);
  });

  it("pages stably while runs are inserted and change status between pages", async () => {
    const first = await durable.startMany(
      pending,
      Array.from({ length: 30 }, (_, n) => ({ n })),
      { ids: Array.from({ length: 30 }, (_, n) => `page-${String(n).padStart(2, "0")}`) },
    );
    expect(first).toHaveLength(30);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await durable.list({ workflow: "pending", limit: 7, cursor });
      seen.push(...page.runs.map((run) => run.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
      // Between pages: new runs arrive (newer than every page) and some seen and unseen runs change.
      await durable.start(pending, { n: 100 + pages }, { id: `late-${pages}` });
      await durable.cancel(`page-${String(30 - pages * 3).padStart(2, "0")}`);
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, n) => `page-${String(29 - n).padStart(2, "0")}`));
    expect(pages).toBe(5);
  });

  it("cancelMany cancels every matching run in batches, once; a second call changes nothing", async () => {
    const inputs = Array.from({ length: 1100 }, (_, n) => ({ n }));
    for (let at = 0; at < inputs.length; at += 550) {
      await durable.startMany(pending, inputs.slice(at, at + 550), { tags: ["bulk"] });
    }
    await durable.start(pending, { n: -1 }, { id: "other", tags: ["keep"] });
    await durable.start(failing, { n: -2 }, { id: "done", tags: ["bulk"] });
    await durable.tick({ budgetMs: 40_000, concurrency: 1 }); // some start waiting, "done" fails
    // On a loaded machine the tick's budget may end before it reaches "done": advance it by id.
    await durable.advance("done");
    expect((await durable.status("done"))!.status).toBe("failed");
    expect(await durable.cancelMany({ tag: "bulk" }, { reason: "cleanup" })).toEqual({
      matched: 1100,
      changed: 1100,
    });
    expect(await durable.cancelMany({ tag: "bulk" })).toEqual({ matched: 0, changed: 0 });
    expect((await durable.status("other"))!.status).not.toBe("cancelled");
    expect((await durable.status("done"))!.status).toBe("failed");
    const { rows } = await sql<{ n: number; events: number }>`
      select count(*)::int as n, count(e.id)::int as events from durable_runs r
        left join durable_events e on e.run_id = r.id and e.kind = 'cancel'
       where r.status = 'cancelled' and r.error ->> 'message' = 'cleanup'`.execute(db);
    expect(rows[0]).toEqual({ n: 1100, events: 1100 });
    // A filter that names a terminal status only matches nothing to cancel.
    expect(await durable.cancelMany({ status: "completed" })).toEqual({ matched: 0, changed: 0 });
    for (const filter of [{}, { stauts: "pending" }, { status: "nope" }, undefined]) {
      await expect(durable.cancelMany(filter as never)).rejects.toThrow(InvalidInputError);
    }
    await expect(durable.cancelMany({ tag: "keep" }, { children: "drop" as never })).rejects.toThrow(InvalidInputError);
    await expect(durable.cancelMany({ tag: "keep" }, { reason: "x".repeat(1001) })).rejects.toThrow(InvalidInputError);
    expect((await durable.status("other"))!.status).not.toBe("cancelled");
  });

  it("retryMany retries the failed runs it matches, each once per call", async () => {
    await durable.startMany(
      failing,
      Array.from({ length: 12 }, (_, n) => ({ n })),
      { ids: Array.from({ length: 12 }, (_, n) => `fail-${n}`) },
    );
    await durable.start(pending, { n: 0 }, { id: "not-failed" });
    await durable.tick({ budgetMs: 40_000 });
    expect(await durable.retryMany({ workflow: "failing" })).toEqual({ matched: 12, changed: 12 });
    expect((await durable.list({ workflow: "failing", status: "pending" })).runs).toHaveLength(12);
    expect(await durable.retryMany({ workflow: "failing" })).toEqual({ matched: 0, changed: 0 });
    await durable.tick({ budgetMs: 40_000 });
    expect(await durable.retryMany({ status: ["failed", "pending"], workflow: "failing" })).toEqual({
      matched: 12,
      changed: 12,
    });
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from durable_events where kind = 'retry'`.execute(db);
    expect(rows[0]!.n).toBe(24);
  });

  it("forks a failed run from its failed step: the copied receipts replay, the rest runs", async () => {
    await durable.start(pipeline, { order: "o-1" }, { id: "src", tags: ["orders"], priority: 3 });
    await durable.tick({ budgetMs: 40_000 });
    const source = (await durable.status("src"))!;
    expect(source.status).toBe("failed");
    expect(runs).toEqual({ a: 1, b: 1, c: 1 });

    failC = false;
    const forked = await durable.fork("src", { fromStep: "c", id: "src-fork" });
    expect(forked).toMatchObject({ id: "src-fork", created: true });
    expect(typeof forked.statusToken).toBe("string");
    await durable.tick({ budgetMs: 40_000 });
    // The fork keeps the source's priority (and rate key): it is claimed as the source was.
    const { rows: claimedAs } = await sql<{ priority: number }>`
      select priority from durable_runs where id = 'src-fork'`.execute(db);
    expect(claimedAs).toEqual([{ priority: 3 }]);
    const fork = (await durable.status("src-fork"))!;
    expect(fork).toMatchObject({
      status: "completed",
      forkedFrom: { runId: "src", stepId: "c" },
      tags: ["orders"],
      metadata: { reached: "c" },
      output: { b: "o-1-b", key: externalKeyFor("src-fork", "c") },
    });
    // "a" and "b" replayed from the copied receipts; only "c" ran again.
    expect(runs).toEqual({ a: 1, b: 1, c: 2 });
    expect(fork.steps.map((step) => [step.id, step.externalKey])).toEqual([
      ["a", externalKeyFor("src-fork", "a")],
      ["b", undefined],
      ["c", externalKeyFor("src-fork", "c")],
    ]);
    // The copied receipt's result is the source's (its key was the source's when it ran).
    const { rows } = await sql<{ result: { key: string } }>`
      select result from durable_steps where run_id = 'src-fork' and step_id = 'a'`.execute(db);
    expect(rows[0]!.result.key).toBe(externalKeyFor("src", "a"));
    // The source is untouched.
    expect(await durable.status("src")).toEqual(source);
    // The same fork again answers it; another source under that id is a conflict.
    expect(await durable.fork("src", { fromStep: "c", id: "src-fork" })).toMatchObject({ created: false });
    await expect(durable.fork("src", { fromStep: "a", id: "src-fork" })).rejects.toThrow(RunStateConflictError);
    // From the first step nothing is copied: the run starts over.
    const again = await durable.fork("src", { fromStep: "a" });
    await durable.tick({ budgetMs: 40_000 });
    expect((await durable.status(again.id))!.status).toBe("completed");
    expect(runs).toEqual({ a: 2, b: 2, c: 3 });
  });

  it("refuses a fork from a step never reached, past a start, of an unknown version or with bad options", async () => {
    await durable.start(pipeline, { order: "o-2" }, { id: "src2" });
    await durable.start(parent, {}, { id: "par" });
    await durable.tick({ budgetMs: 40_000 });
    await expect(durable.fork("src2", { fromStep: "never" })).rejects.toThrow(InvalidInputError);
    await expect(durable.fork("par", { fromStep: "after" })).rejects.toThrow(RunStateConflictError);
    await expect(durable.fork("par", { fromStep: "kid" })).resolves.toMatchObject({ created: true });
    await expect(durable.fork("src2", { fromStep: "c", id: "src2" })).rejects.toThrow(InvalidInputError);
    await expect(durable.fork("src2", { fromStep: "" })).rejects.toThrow(InvalidInputError);
    await expect(durable.fork("src2", { fromStep: "c", extra: 1 } as never)).rejects.toThrow(InvalidInputError);
    await expect(durable.fork("missing", { fromStep: "c" })).rejects.toThrow(/not found/);
    const pipelineV2 = defineWorkflow({ ...pipeline, version: 2 } as never) as typeof pipeline;
    const other = createDurable({ db, workflows: [pipelineV2], log: () => {} });
    await expect(other.fork("src2", { fromStep: "c" })).rejects.toThrow(RunStateConflictError);
    const before = await count();
    await expect(other.fork("src2", { fromStep: "c" })).rejects.toThrow(/not registered/);
    expect(await count()).toBe(before);
  });
});
