// Retention on the real server: the shared suite, plus what needs several connections at once
// (compactors racing each other, and racing ticks and starts of the same ids).
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDurable, type Durable, type RetentionOptions } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { countLabel, countRuns } from "../../app/runs/counts";
import { chatty, count, patient, runRetentionContract, seedFinished } from "../contract/retention-contract";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";

runRetentionContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_retention_pg"), { driver: "pg" }),
);

describe("retention with several connections (PostgreSQL)", () => {
  let url: string;
  let db: Kysely<any>;
  let durable: Durable;
  const instances: Durable[] = [];
  /** An instance on a pool of its own: another session, as another invocation would be. */
  async function another(retention: RetentionOptions | undefined): Promise<Durable> {
    const made = createDurable({
      db: await connect(url, { driver: "pg", poolSize: 2 }),
      workflows: [chatty, patient],
      defaults: { lease: "5s" },
      retention,
      log: () => {},
    });
    instances.push(made);
    return made;
  }

  beforeAll(async () => {
    url = await createTestDatabase("durable_retention_racing");
    db = await connect(url, { driver: "pg", poolSize: 4 });
    durable = createDurable({ db, workflows: [chatty, patient], defaults: { lease: "5s" } });
    await durable.migrate();
  });
  afterAll(async () => {
    for (const made of instances) await made.close();
    await durable?.close();
  });
  beforeEach(() => resetDurableTables(db));

  it("two tick loops and two compact() loops at once leave nothing due, with no error", async () => {
    await seedFinished(db, "compact", 1_500); // due for compaction (2 days old; their events are kept)
    await seedFinished(db, "delete", 1_500, "40 days"); // due for deletion, with their events
    await sql`insert into durable_events (run_id, kind, created_at)
              select 'elsewhere-' || g, 'note', durable_now() - interval '10 days'
                from generate_series(1, 1500) g`.execute(db);
    const retention: RetentionOptions = { steps: "1d", runs: "30d", events: "7d", slice: { rows: 120 } };
    const loops = await Promise.all([1, 2, 3, 4].map(() => another(retention)));
    const warnings: string[] = [];
    await Promise.all(
      loops.map(async (instance, i) => {
        if (i < 2) {
          while ((await instance.compact({ limit: 75 })).more) {}
          return;
        }
        for (;;) {
          const report = await instance.tick({ budgetMs: 10_000 });
          warnings.push(...report.warnings);
          if (report.compacted === 0) return;
        }
      }),
    );
    expect(warnings).toEqual([]);
    expect(await (await another(retention)).compact({ limit: 100_000 })).toEqual({
      runsCompacted: 0,
      runsDeleted: 0,
      eventsDeleted: 0,
      stepRowsDeleted: 0,
      more: false,
    });
    expect(await count(db, "durable_runs", "compacted_at is null")).toBe(0);
    expect(await count(db, "durable_runs")).toBe(1_500);
    expect(await count(db, "durable_steps")).toBe(0);
    expect(await count(db, "durable_signals")).toBe(0);
    expect(await count(db, "durable_stream_chunks")).toBe(0);
    expect(await count(db, "durable_events", "run_id like 'compact-%'")).toBe(1_500);
    expect(await count(db, "durable_events")).toBe(1_500);
  });

  it("counts each deletion once across racing compact() calls", async () => {
    await seedFinished(db, "delete", 2_000, "40 days");
    await seedFinished(db, "compact", 2_000);
    const retention: RetentionOptions = { steps: "1d", runs: "30d", events: "7d" };
    const compactors = await Promise.all([1, 2, 3, 4].map(() => another(retention)));
    const reports = await Promise.all(
      compactors.map(async (compactor) => {
        const mine = { runsCompacted: 0, runsDeleted: 0, eventsDeleted: 0, stepRowsDeleted: 0 };
        for (;;) {
          const report = await compactor.compact({ limit: 50 });
          mine.runsCompacted += report.runsCompacted;
          mine.runsDeleted += report.runsDeleted;
          mine.eventsDeleted += report.eventsDeleted;
          mine.stepRowsDeleted += report.stepRowsDeleted;
          if (!report.more) return mine;
        }
      }),
    );
    const sum = (key: keyof (typeof reports)[number]) => reports.reduce((total, report) => total + report[key], 0);
    expect(sum("runsDeleted")).toBe(2_000);
    expect(sum("runsCompacted")).toBe(2_000);
    expect(sum("stepRowsDeleted")).toBe(2_000 * 4);
    expect(sum("eventsDeleted")).toBe(2_000); // the deleted runs' own; the compacted runs' are 2 days old
    // Every compactor did some of it: they shared the work rather than waiting on each other.
    expect(reports.filter((report) => report.runsDeleted + report.runsCompacted > 0).length).toBeGreaterThan(1);
  });

  it("compaction racing ticks and starts of the same ids breaks nothing", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `again-${i}`);
    const ticker = await another({ steps: "1m", runs: "2m", events: "1m" });
    const compactor = await another({ steps: "1m", runs: "2m", events: "1m", slice: { rows: 10 } });
    // A run that waits for ever through all of it: never touched.
    await durable.start(patient, { n: 1 }, { id: "forever" });
    await durable.tick({ budgetMs: 10_000 });
    const errors: unknown[] = [];
    const created = new Map<string, number>();
    let stop = false;
    const loops = [
      // Starts the same ids again and again: each answers the run the row holds, or starts a new one.
      (async () => {
        for (let round = 0; round < 12; round++) {
          for (const id of ids) {
            const result = await ticker.start(chatty, { n: 0 }, { id });
            if (result.created) created.set(id, (created.get(id) ?? 0) + 1);
            await ticker.signal({ runId: id, name: "go", payload: { ok: true } }).catch(() => {});
          }
          // Time passes: what finished is due for compaction, then for deletion.
          await durable.testing.advanceClock("90s");
        }
        stop = true;
      })(),
      (async () => {
        while (!stop) {
          const report = await ticker.tick({ budgetMs: 10_000 });
          if (report.warnings.length) errors.push(...report.warnings);
          if (report.claimed === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })(),
      ...[1, 2].map(async () => {
        while (!stop) await compactor.compact({ limit: 10 });
      }),
    ].map((loop) => loop.catch((error) => errors.push(error)));
    await Promise.all(loops);
    expect(errors).toEqual([]);

    // Every run row is consistent: a compacted run is terminal and has no steps left; a run whose
    // steps are gone was compacted (or has not reached a step yet); a run that is not terminal was
    // never compacted.
    const { rows } = await sql<{ id: string; status: string; compacted: boolean; steps: number }>`
      select r.id, r.status, r.compacted_at is not null as compacted,
             (select count(*)::int from durable_steps s where s.run_id = r.id) as steps
        from durable_runs r`.execute(db);
    for (const row of rows) {
      if (row.compacted) expect(row, row.id).toMatchObject({ steps: 0 });
      if (row.compacted) expect(["completed", "failed", "cancelled"], row.id).toContain(row.status);
      if (row.status === "completed" && !row.compacted) expect(row.steps, row.id).toBeGreaterThan(0);
    }
    expect(await durable.status("forever")).toMatchObject({ status: "waiting" });
    expect(await count(db, "durable_steps", "run_id = 'forever'")).toBe(2);
    // Ids were started again once their rows were deleted: dedup lasted exactly as long as the row.
    expect([...created.values()].some((n) => n > 1)).toBe(true);
    for (const id of ids) {
      const status = await durable.status(id);
      if (status) expect(await durable.start(chatty, { n: 0 }, { id })).toMatchObject({ created: false });
    }
  });

  it("the dashboard's counts are bounded on the server too", async () => {
    await seedFinished(db, "many", 10_010);
    await durable.start(patient, { n: 1 }, { id: "due" });
    const counts = await countRuns(db);
    expect(counts).toMatchObject({ pending: 1, completed: 10_001 });
    expect([countLabel(counts, "all"), countLabel(counts, "completed"), countLabel(counts, "pending")]).toEqual([
      "10,000+",
      "10,000+",
      "1",
    ]);
  });
});
