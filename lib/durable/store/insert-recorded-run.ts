import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** A finished receipt of a recorded run, as replayTest seeds it (docs/guide/edit-and-resume.md). */
export interface RecordedReceipt {
  stepId: string;
  seq: number;
  kind: string;
  status: "completed" | "failed";
  attempt: number;
  /** The result's JSON text (null: none). */
  resultJson: string | null;
  error: Record<string, unknown> | null;
  externalKey: string | null;
}

/**
 * Inserts a run due now with its finished receipts, as a recording holds them: the start of a
 * replay (lib/durable/testing.ts, `replayTest`) on the harness's own database. One transaction.
 * `attempts` 1: a run's first claim (attempts 0) reads no ledger, since a new run has none.
 */
export async function insertRecordedRun(
  db: DurableDb,
  run: { id: string; workflow: string; version: string | null; inputJson: string },
  receipts: RecordedReceipt[],
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto("durable_runs")
      .values({
        id: run.id,
        workflow: run.workflow,
        version: run.version,
        input: run.inputJson,
        wake_at: sql`durable_now()`,
        attempts: 1,
      } as never)
      .execute();
    if (receipts.length === 0) return;
    await tx
      .insertInto("durable_steps")
      .values(
        receipts.map((receipt) => ({
          run_id: run.id,
          step_id: receipt.stepId,
          seq: receipt.seq,
          kind: receipt.kind,
          status: receipt.status,
          attempt: receipt.attempt,
          result: receipt.resultJson,
          result_bytes: receipt.resultJson === null ? null : Buffer.byteLength(receipt.resultJson, "utf8"),
          error: receipt.error === null ? null : JSON.stringify(receipt.error),
          external_key: receipt.externalKey,
          fence: 0,
          completed_at: sql`durable_now()`,
        })) as never,
      )
      .execute();
  });
}
