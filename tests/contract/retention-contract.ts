// Retention (docs/guide/retention.md, "Retention"), one suite run on every database: compaction deletes
// exactly what is due (step rows, signals and stream chunks of terminal runs older than `steps`,
// run rows older than `runs` with their events, events older than `events`), never anything of a
// run that is not terminal, a bounded slice per tick; start dedup holds while the run row lives.
// Racing compactors on several connections live in tests/postgres/retention.test.ts.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createDurable,
  type Durable,
  defineWorkflow,
  InvalidInputError,
  type RetentionOptions,
  RunStateConflictError,
} from "@/lib/durable";
import { createCompactor } from "@/lib/durable/engine/retention";
import { resetDurableTables } from "../helpers/databases";

// Leaves a step row, a stream chunk and a taken signal, and an event when it is cancelled.
export const chatty = defineWorkflow({
  name: "chatty",
  input: z.object({ n: z.number(), fail: z.boolean().default(false) }),
  signals: { go: z.object({ ok: z.boolean() }) },
  async run(ctx, input) {
    await ctx.step.run("write", async () => {
      const stream = ctx.stream("write");
      stream.write({ n: input.n });
      await stream.flush();
      return input.n;
    });
    const go = await ctx.step.waitForSignal("go", { timeout: "1h" });
    return ctx.step.run("finish", () => {
      if (input.fail) throw new Error("told to fail");
      return { n: input.n, ok: go?.ok ?? null };
    });
  },
});

// Waits for "go" with no deadline: it stays waiting for ever unless a signal comes.
export const patient = defineWorkflow({
  name: "patient",
  input: z.object({ n: z.number() }),
  signals: { go: z.object({}), other: z.object({}) },
  async run(ctx, input) {
    await ctx.step.run("write", async () => {
      const stream = ctx.stream("write");
      stream.write({ n: input.n });
      await stream.flush();
      return input.n;
    });
    await ctx.step.waitForSignal("go");
    return input.n;
  },
});

/** What the database holds for a run: its row's status and compaction, and its rows of each table. */
export async function holdings(db: Kysely<any>, id: string) {
  const { rows } = await sql<{
    status: string | null;
    compacted: boolean | null;
    steps: number;
    signals: number;
    chunks: number;
    events: number;
  }>`
    select (select status from durable_runs where id = ${id}) as status,
           (select compacted_at is not null from durable_runs where id = ${id}) as compacted,
           (select count(*)::int from durable_steps where run_id = ${id}) as steps,
           (select count(*)::int from durable_signals where run_id = ${id}) as signals,
           (select count(*)::int from durable_stream_chunks where run_id = ${id}) as chunks,
           (select count(*)::int from durable_events where run_id = ${id}) as events`.execute(db);
  return rows[0]!;
}

/**
 * Inserts `n` terminal runs `<prefix>-<i>` that finished `age` ago by the database clock, each with
 * two step rows, a signal, a stream chunk and an event: bulk rows, as many as a test needs.
 */
export async function seedFinished(db: Kysely<any>, prefix: string, n: number, age = "2 days"): Promise<void> {
  await sql`
    insert into durable_runs (id, workflow, status, input, output, wake_at, fence, attempts,
                              created_at, updated_at, finished_at)
    with base as materialized (select durable_now() - ${age}::interval as t0)
    select ${prefix} || '-' || g, 'chatty', 'completed', '{}'::jsonb, '1'::jsonb, null, 1, 1, t, t, t
      from base, generate_series(1, ${n}::int) g, lateral (select t0 - g * interval '1 millisecond') x(t)`.execute(db);
  await sql`
    insert into durable_steps (run_id, step_id, seq, kind, status, result, fence)
    select ${prefix} || '-' || g, s, i, 'run', 'completed', '1'::jsonb, 1
      from generate_series(1, ${n}::int) g, unnest(array['a', 'b']) with ordinality u(s, i)`.execute(db);
  await sql`
    insert into durable_signals (run_id, name, payload, taken_by)
    select ${prefix} || '-' || g, 'go', '{}'::jsonb, 'go' from generate_series(1, ${n}::int) g`.execute(db);
  await sql`
    insert into durable_stream_chunks (run_id, seq, step_id, attempt, data)
    select ${prefix} || '-' || g, 1, 'a', 1, '"x"'::jsonb from generate_series(1, ${n}::int) g`.execute(db);
  await sql`
    insert into durable_events (run_id, kind, created_at)
    select ${prefix} || '-' || g, 'test', durable_now() - ${age}::interval
      from generate_series(1, ${n}::int) g`.execute(db);
}

/** Rows of a table (whole-table counts: the suites' tables are small). */
export async function count(db: Kysely<any>, table: string, where = "true"): Promise<number> {
  const query = sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${sql.raw(where)}`;
  const { rows } = await query.execute(db);
  return rows[0]!.n;
}

export function runRetentionContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`retention on ${label}`, () => {
    let db: Kysely<any>;
    let durable: Durable;
    /** Drives runs, without retention: only the calls a test makes compact anything. */
    let plain: Durable;
    const retention: RetentionOptions = { steps: "1d", runs: "30d", events: "7d" };
    const tick = () => durable.tick({ budgetMs: 10_000 });
    /** Another instance on the same database (never closed: closing it would close the database). */
    const instance = (options: RetentionOptions | undefined) =>
      createDurable({ db, workflows: [chatty, patient], defaults: { lease: "2s" }, retention: options });

    /** Runs chatty `id` to its end: completed, failed (`fail`) or cancelled (`cancel`). */
    async function finish(id: string, end: "completed" | "failed" | "cancelled" = "completed") {
      await plain.start(chatty, { n: 1, fail: end === "failed" }, { id });
      await plain.tick({ budgetMs: 10_000 });
      if (end === "cancelled") {
        await plain.cancel(id, "no longer wanted");
        return;
      }
      await plain.signal({ runId: id, name: "go", payload: { ok: true } });
      await plain.tick({ budgetMs: 10_000 });
      expect((await plain.status(id))!.status).toBe(end);
    }

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows: [chatty, patient], defaults: { lease: "2s" }, retention });
      await durable.migrate();
      plain = instance(undefined);
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(() => resetDurableTables(db));

    it("deletes the step rows, signals and chunks of runs finished over `steps` ago, keeping the rows", async () => {
      await finish("done");
      await finish("failed", "failed");
      await finish("cancelled", "cancelled");
      expect(await holdings(db, "done")).toMatchObject({ status: "completed", steps: 3, signals: 1, chunks: 1 });
      expect(await holdings(db, "cancelled")).toMatchObject({ steps: 2, chunks: 1, events: 1 });
      const before = (await durable.status("done"))!;

      // Not yet: they finished less than a day ago.
      await durable.testing.advanceClock("23h");
      expect(await tick()).toMatchObject({ compacted: 0 });
      expect(await holdings(db, "done")).toMatchObject({ compacted: false, steps: 3, signals: 1, chunks: 1 });

      await durable.testing.advanceClock("2h");
      await finish("recent"); // finished just now: not due
      expect(await tick()).toMatchObject({ compacted: 3, claimed: 0 });
      for (const id of ["done", "failed", "cancelled"]) {
        expect(await holdings(db, id)).toMatchObject({ compacted: true, steps: 0, signals: 0, chunks: 0 });
      }
      // Events are older than a day but not than `events` (7 days): kept.
      expect(await holdings(db, "cancelled")).toMatchObject({ status: "cancelled", events: 1 });
      expect(await holdings(db, "recent")).toMatchObject({ compacted: false, steps: 3, signals: 1, chunks: 1 });

      // The row answers as before, without its steps.
      const after = (await durable.status("done"))!;
      expect(after).toMatchObject({ status: "completed", output: before.output, steps: [] });
      expect(after.createdAt).toBe(before.createdAt);
      expect(await durable.status("failed")).toMatchObject({ status: "failed", error: { message: "told to fail" } });
      expect((await durable.readStream("done"))!).toEqual({ status: "completed", chunks: [] });
      // Start dedup holds: the same id answers the existing run; another input is a conflict.
      expect(await durable.start(chatty, { n: 1, fail: false }, { id: "done" })).toMatchObject({ created: false });
      await expect(durable.start(chatty, { n: 2 }, { id: "done" })).rejects.toSatisfy(RunStateConflictError.is);
      expect((await durable.status("done"))!.status).toBe("completed");
      // Nothing more is due: a tick compacts nothing, twice over.
      expect(await tick()).toMatchObject({ compacted: 0 });
      expect(await durable.compact()).toEqual({
        runsCompacted: 0,
        runsDeleted: 0,
        eventsDeleted: 0,
        stepRowsDeleted: 0,
        more: false,
      });
    });

    it("keeps a compacted run's delivery ids (not payloads): a repeated delivery is still a repeat", async () => {
      await plain.start(chatty, { n: 1 }, { id: "hooked" });
      await plain.tick({ budgetMs: 10_000 });
      const delivery = { runId: "hooked", name: "go", payload: { ok: true }, id: "evt-1" };
      expect(await plain.signal(delivery)).toMatchObject({ signalled: true });
      await plain.tick({ budgetMs: 10_000 });
      expect((await plain.status("hooked"))!.status).toBe("completed");

      await durable.testing.advanceClock("25h");
      expect(await tick()).toMatchObject({ compacted: 1 });
      expect(await holdings(db, "hooked")).toMatchObject({ compacted: true, steps: 0, signals: 1, chunks: 0 });
      const kept = await sql<{ payload: unknown; delivery_id: string }>`
        select payload, delivery_id from durable_signals where run_id = 'hooked'`.execute(db);
      expect(kept.rows).toEqual([{ payload: null, delivery_id: "evt-1" }]);
      // A Standard Webhooks sender retries for days: its repeat is answered as one (2xx), not 409.
      expect(await plain.signal(delivery)).toEqual({ ok: true, signalled: false, alreadyDelivered: true });
      // A new delivery to the finished run is refused, as before compaction.
      await expect(plain.signal({ ...delivery, id: "evt-2" })).rejects.toThrow(RunStateConflictError);
      expect(await count(db, "durable_signals", "run_id = 'hooked'")).toBe(1);
    });

    it("refuses to retry a failed run whose steps were compacted, and retries one that was not", async () => {
      await finish("old-failure", "failed");
      await durable.testing.advanceClock("25h");
      await finish("new-failure", "failed");
      expect(await tick()).toMatchObject({ compacted: 1 });
      const refused = await durable.retry("old-failure").catch((error) => error);
      expect(RunStateConflictError.is(refused)).toBe(true);
      expect(refused.message).toContain("retention deleted its receipts");
      expect(await holdings(db, "old-failure")).toMatchObject({ status: "failed", compacted: true });
      expect((await durable.retry("new-failure")).status).toBe("pending");
    });

    it("deletes the rows of runs finished longer ago than `runs`, with their events; then the id is free", async () => {
      await finish("old", "cancelled");
      await finish("kept");
      await durable.testing.advanceClock("20d");
      await finish("young");
      await durable.testing.advanceClock("10d");
      await sql`insert into durable_events (run_id, kind) values ('young', 'note')`.execute(db);
      // "old" and "kept" finished 30 days ago; only "old" more than 30 days: nudge "kept" a minute later.
      await sql`update durable_runs set finished_at = finished_at + interval '2 minutes' where id = 'kept'`.execute(db);
      await durable.testing.advanceClock("1m");

      const report = await durable.compact();
      expect(report).toMatchObject({ runsDeleted: 1, runsCompacted: 2, more: false });
      expect(await holdings(db, "old")).toEqual({
        status: null,
        compacted: null,
        steps: 0,
        signals: 0,
        chunks: 0,
        events: 0,
      });
      expect(report.eventsDeleted).toBe(1); // the cancel event of "old", gone with its run
      expect(await holdings(db, "kept")).toMatchObject({ status: "completed", compacted: true, steps: 0 });
      expect(await holdings(db, "young")).toMatchObject({ compacted: true, events: 1 });
      expect(await durable.status("old")).toBeNull();
      // Start dedup lasts as long as the row: the id starts a new run now.
      expect(await durable.start(chatty, { n: 5 }, { id: "old" })).toMatchObject({ created: true });
      expect((await durable.status("old"))!.status).toBe("pending");
    });

    it("deletes events older than `events`, except those of runs that are not terminal", async () => {
      await finish("done");
      await durable.start(chatty, { n: 1 }, { id: "waiting" });
      await tick();
      const note = (runId: string, kind: string) =>
        sql`insert into durable_events (run_id, kind) values (${runId}, ${kind})`.execute(db);
      await note("done", "old");
      await note("waiting", "old");
      await note("gone-long-ago", "old"); // a run no longer there
      await durable.testing.advanceClock("6d");
      await note("done", "new");
      await durable.testing.advanceClock("1441m"); // a day and a minute
      const report = await durable.compact();
      expect(report).toMatchObject({ eventsDeleted: 2, runsDeleted: 0, more: false });
      const kinds = await sql<{ run_id: string; kind: string }>`
        select run_id, kind from durable_events order by id`.execute(db);
      expect(kinds.rows).toEqual([
        { run_id: "waiting", kind: "old" },
        { run_id: "done", kind: "new" },
      ]);
      expect((await durable.events("done")).map((event) => event.kind)).toEqual(["new"]);
    });

    it("never touches a run that is not terminal, however old", async () => {
      // Waiting a year for a signal, with a step, a chunk, a delivery in its mailbox and events.
      await durable.start(patient, { n: 7 }, { id: "patient" });
      await tick();
      await durable.signal({ runId: "patient", name: "other", payload: {} });
      await sql`insert into durable_events (run_id, kind) values ('patient', 'note')`.execute(db);
      await durable.start(chatty, { n: 8 }, { id: "never-claimed" });
      await sql`insert into durable_events (run_id, kind) values ('never-claimed', 'note')`.execute(db);
      const before = await holdings(db, "patient");
      expect(before).toMatchObject({ status: "waiting", steps: 2, signals: 1, chunks: 1, events: 1 });
      await durable.testing.advanceClock("400d");

      const short = instance({ steps: "1m", runs: "2m", events: "1m" });
      expect(await short.compact({ limit: 100_000 })).toMatchObject({
        runsCompacted: 0,
        runsDeleted: 0,
        eventsDeleted: 0,
        more: false,
      });
      expect(await holdings(db, "patient")).toEqual(before);
      expect(await holdings(db, "never-claimed")).toMatchObject({ status: "pending", compacted: false, events: 1 });
      // And it goes on as if nothing happened.
      await durable.signal({ runId: "patient", name: "go", payload: { ok: true } });
      await tick();
      expect(await durable.status("patient")).toMatchObject({ status: "completed", output: 7 });
      expect(await durable.status("never-claimed")).toMatchObject({ status: "waiting" });
    });

    it("spends a bounded slice per tick: at most `slice.rows` of each kind, then says there is more", async () => {
      await seedFinished(db, "bulk", 250);
      const bounded = instance({ steps: "1d", events: "1d", slice: { rows: 100 } });
      expect(await bounded.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 0, compacted: 200 }); // 100 + 100
      expect(await count(db, "durable_runs", "compacted_at is not null")).toBe(100);
      expect(await count(db, "durable_events")).toBe(150);
      // Oldest first: the 100 that finished longest ago.
      expect(await count(db, "durable_runs", "compacted_at is not null and split_part(id, '-', 2)::int > 150")).toBe(
        100,
      );

      const compactor = createCompactor({ db, retention: { steps: "1d", slice: { rows: 100 } }, log: () => {} });
      expect(await compactor.slice()).toEqual({
        runsCompacted: 100,
        runsDeleted: 0,
        eventsDeleted: 0,
        stepRowsDeleted: 400, // two steps, a signal and a chunk each
        more: true,
      });
      expect(await compactor.slice()).toMatchObject({ runsCompacted: 50, more: false });
      expect(await compactor.slice()).toMatchObject({ runsCompacted: 0, more: false });
      expect(await count(db, "durable_steps")).toBe(0);
      expect(await count(db, "durable_runs")).toBe(250);
    });

    it("takes 500 rows of each kind per tick by default, and stops early when its time runs out", async () => {
      await seedFinished(db, "bulk", 600);
      // The default rows; time enough that a slow machine still takes them all.
      const report = await instance({ ...retention, slice: { budget: "60s" } }).tick({ budgetMs: 10_000 });
      expect(report.compacted).toBe(500);
      expect(await count(db, "durable_runs", "compacted_at is null")).toBe(100);

      // A budget of 1 ms: one statement of at most 100 rows of each kind, then it stops.
      await seedFinished(db, "late", 300);
      const hurried = createCompactor({
        db,
        retention: { steps: "1d", slice: { rows: 10_000, budget: "1ms" } },
        log: () => {},
      });
      expect(await hurried.slice()).toMatchObject({ runsCompacted: 100, more: true });
      expect(await durable.compact()).toMatchObject({ runsCompacted: 300, more: false });
      expect(await hurried.slice()).toMatchObject({ runsCompacted: 0, more: false });
    });

    it("takes fewer rows per statement after a statement that took over half the slice's time", async () => {
      await seedFinished(db, "slow", 400);
      // Every statement answers 80 ms late: more than half a 100 ms slice.
      const slow = db.withPlugin({
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          await new Promise((resolve) => setTimeout(resolve, 80));
          return args.result;
        },
      });
      const compactor = createCompactor({
        db: slow,
        retention: { steps: "1d", slice: { budget: "100ms" } },
        log: () => {},
      });
      const taken: number[] = [];
      for (let i = 0; i < 4; i++) taken.push((await compactor.slice())!.runsCompacted);
      expect(taken).toEqual([100, 50, 25, 12]);
    });

    it("compact({ limit }) does at most `limit` of each kind, in as many statements as it takes", async () => {
      await seedFinished(db, "due", 1_500, "40 days");
      await seedFinished(db, "young", 30);
      const runsAndSteps = instance({ steps: "1d", runs: "30d" });
      const first = await runsAndSteps.compact({ limit: 1_200 });
      // The events of a deleted run go with it, whatever `events` says.
      expect(first).toMatchObject({ runsDeleted: 1_200, runsCompacted: 30, eventsDeleted: 1_200, more: true });
      expect(first.stepRowsDeleted).toBe(30 * 4);
      const rest = await runsAndSteps.compact({ limit: 1_200 });
      expect(rest).toMatchObject({ runsDeleted: 300, runsCompacted: 0, eventsDeleted: 300, more: false });
      expect(await count(db, "durable_runs")).toBe(30);
      expect(await count(db, "durable_steps")).toBe(0);
      expect(await count(db, "durable_events")).toBe(30);

      const events = instance({ events: "1d" });
      expect(await events.compact({ limit: 20 })).toMatchObject({ eventsDeleted: 20, runsDeleted: 0, more: true });
      expect(await events.compact({ limit: 20 })).toMatchObject({ eventsDeleted: 10, more: false });
      for (const limit of [0, -1, 1.5, 100_001, Number.NaN, "10" as unknown as number]) {
        await expect(durable.compact({ limit })).rejects.toSatisfy(InvalidInputError.is);
      }
    });

    it('keeps run rows with runs: "never" (and deletes nothing at all without retention)', async () => {
      await seedFinished(db, "ancient", 20, "3650 days");
      const keeper = instance({ steps: "1d", runs: "never" });
      expect(await keeper.compact()).toMatchObject({ runsCompacted: 20, runsDeleted: 0, eventsDeleted: 0 });
      expect(await count(db, "durable_runs")).toBe(20);
      expect(await count(db, "durable_events")).toBe(20);

      const none = instance(undefined);
      await seedFinished(db, "more", 5, "3650 days");
      expect(await none.compact()).toMatchObject({ runsCompacted: 0, runsDeleted: 0, eventsDeleted: 0, more: false });
      expect(await none.tick({ budgetMs: 10_000 })).toMatchObject({ compacted: 0 });
      expect(await count(db, "durable_steps")).toBe(10);
    });

    it("asks nothing of the database without retention, and one statement when nothing is due", async () => {
      const untouchable = new Proxy(
        {},
        {
          get() {
            throw new Error("the database was used");
          },
        },
      ) as never;
      for (const options of [undefined, {}, { runs: "never" as const }]) {
        expect(await createCompactor({ db: untouchable, retention: options, log: () => {} }).slice()).toBeNull();
      }
      let statements = 0;
      const counted = db.withPlugin({
        transformQuery: (args) => {
          statements++;
          return args.node;
        },
        transformResult: async (args) => args.result,
      });
      const compactor = createCompactor({ db: counted, retention, log: () => {} });
      await finish("fresh");
      expect(await compactor.slice()).toMatchObject({ runsCompacted: 0, more: false });
      expect(statements).toBe(1);
    });

    it("refuses bad options when the instance is made", () => {
      const bad: unknown[] = [
        null,
        "7d",
        { steps: "30s" }, // under a minute
        { steps: "7 d" },
        { steps: -1 },
        { runs: "forever" },
        { events: "36501d" },
        { step: "7d" }, // a typo is not silently ignored
        { steps: "7d", slice: { rows: 0 } },
        { steps: "7d", slice: { rows: 10_001 } },
        { steps: "7d", slice: { budget: "2m" } },
        { steps: "7d", slice: "fast" },
      ];
      for (const options of bad) {
        expect(() => instance(options as RetentionOptions), JSON.stringify(options)).toThrow(InvalidInputError);
      }
      // Allowed: runs shorter than steps (the row goes with its steps), "never", durations as ms.
      for (const options of [{ steps: "30d", runs: "7d" }, { runs: "never" }, { steps: 86_400_000 }, {}]) {
        expect(() => instance(options as RetentionOptions)).not.toThrow();
      }
    });
  });
}
