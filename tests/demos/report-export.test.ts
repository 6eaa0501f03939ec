// The report-export demo (app/workflows/report-export.ts) on the test harness: submit once, then
// poll with waitFor until the export is done, one receipt for the final status.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { attachProviderDb } from "@/app/mock-providers/db";
import { reportExport } from "@/app/workflows/report-export";
import { ensureAppSchema } from "@/db/app-schema";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

let durable: TestDurable;
beforeAll(async () => {
  // The operations API fails one status read in five at random: not in these tests.
  vi.spyOn(Math, "random").mockReturnValue(0.5);
  durable = await createTestDurable({
    workflows: [reportExport],
    // Every poll interval parks the run, so the test moves the clock instead of waiting it out.
    defaults: { inProcessWait: 0 },
    async setup(db) {
      await ensureAppSchema(db);
      attachProviderDb(db);
    },
  });
});
afterAll(async () => {
  vi.restoreAllMocks();
  await durable.close();
});

/** An operation on the mock provider's side, `ageMs` into its `durationMs` of work. */
async function operation(id: string, runId: string, { durationMs, ageMs }: { durationMs: number; ageMs: number }) {
  await sql`
    insert into mock_operations (id, idempotency_key, run_id, kind, duration_ms, submitted_at)
    values (${id}, ${`key-${id}`}, ${runId}, 'export', ${durationMs},
      now() - ${ageMs}::int * interval '1 millisecond')`.execute(durable.db);
}

/** The export finishes on the provider's side (its work is measured on the server's real clock). */
const finish = (id: string) =>
  sql`update mock_operations set submitted_at = now() - interval '1 hour' where id = ${id}`.execute(durable.db);

async function polls(runId: string) {
  const { rows } = await sql<{ polls: number; status: string }>`
    select polls, status from durable_steps where run_id = ${runId} and step_id = 'export-finished'`.execute(
    durable.db,
  );
  return rows[0];
}

describe("report-export", () => {
  it("completes at once when the provider's export is already done", async () => {
    await operation("op_ready", "export-ready", { durationMs: 6000, ageMs: 60_000 });
    durable.mockStep("submit-export", { result: { operationId: "op_ready" } }, { runId: "export-ready" });
    const done = await durable.run(reportExport, { report: "Q4" }, { id: "export-ready" });
    expect(done).toMatchObject({
      status: "completed",
      output: {
        report: "Q4",
        operationId: "op_ready",
        url: "https://files.example.com/exports/op_ready.csv",
        rows: 7000,
      },
    });
    expect(await polls("export-ready")).toEqual({ polls: 1, status: "completed" });
  });

  it("polls on the clock until the export is done, leaving one receipt", async () => {
    await operation("op_slow", "export-slow", { durationMs: 600_000, ageMs: 0 });
    durable.mockStep("submit-export", { result: { operationId: "op_slow" } }, { runId: "export-slow" });
    const first = await durable.run(reportExport, {}, { id: "export-slow" });
    expect(first).toMatchObject({ status: "waiting", waitingFor: { kind: "poll", name: "export-finished" } });
    expect(await polls("export-slow")).toEqual({ polls: 1, status: "waiting" });

    // The next poll is due 2 s after the last one began (every: "2s"): in the row, a little under
    // 2 s after the poll was written. (The database clock also moves in real time, so a drive at
    // +1 s would poll early on a machine that took a second in between.)
    const { rows } = await sql<{ ms: number }>`
      select (extract(epoch from wake_at - updated_at) * 1000)::int as ms from durable_steps
       where run_id = 'export-slow' and step_id = 'export-finished'`.execute(durable.db);
    expect(rows[0]!.ms).toBeGreaterThan(1000);
    expect(rows[0]!.ms).toBeLessThanOrEqual(2000);
    await durable.advanceClock("2s");
    expect(await durable.drive("export-slow")).toMatchObject({ status: "waiting" });
    expect(await polls("export-slow")).toEqual({ polls: 2, status: "waiting" });

    await finish("op_slow");
    await durable.advanceClock("10s");
    const done = await durable.drive("export-slow");
    expect(done).toMatchObject({
      status: "completed",
      output: { url: "https://files.example.com/exports/op_slow.csv" },
    });
    expect(await polls("export-slow")).toEqual({ polls: 3, status: "completed" });
  });

  it("submits through the provider once, even when a response is lost", async () => {
    const first = await durable.run(reportExport, {}, { id: "export-lost" });
    expect(first).toMatchObject({ status: "waiting", waitingFor: { kind: "retry", name: "submit-export" } });
    const { rows } = await sql<{ id: string }>`
      select id from mock_operations where run_id = 'export-lost'`.execute(durable.db);
    expect(rows).toHaveLength(1);
    const operationId = rows[0]!.id;
    await finish(operationId);
    let status = first;
    for (let i = 0; i < 10 && status.status === "waiting"; i++) {
      await durable.advanceClock("10s");
      status = await durable.drive("export-lost");
    }
    expect(status).toMatchObject({ status: "completed", output: { operationId } });
    const requests = await sql<{ outcome: string }>`
      select outcome from mock_provider_requests
      where run_id = 'export-lost' and operation = 'submit' order by id`.execute(durable.db);
    // The first submit created the operation and lost its response; the retry found the same one.
    expect(requests.rows.map((row) => row.outcome)).toEqual(["lost_response", "deduped"]);
    expect(status.steps.find((step) => step.id === "submit-export")).toMatchObject({ attempt: 2 });
  });

  it("fails with StepTimeoutError when the export is not done within 30 minutes", async () => {
    await operation("op_stuck", "export-stuck", { durationMs: 86_400_000, ageMs: 0 });
    durable.mockStep("submit-export", { result: { operationId: "op_stuck" } }, { runId: "export-stuck" });
    expect(await durable.run(reportExport, {}, { id: "export-stuck" })).toMatchObject({ status: "waiting" });
    await durable.advanceClock("31m");
    const failed = await durable.drive("export-stuck");
    expect(failed).toMatchObject({ status: "failed", error: { code: "step_timeout" } });
    expect(failed.steps.find((step) => step.id === "export-finished")).toMatchObject({ status: "failed" });
  });
});
