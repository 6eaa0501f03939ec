import { sql } from "kysely";
import type { DurableDb } from "./tables";

export type CallbackDelivery = "not_found" | "repeat" | "resolved" | "timed_out" | "terminal" | "delivered";

/** A callback's row as the engine needs it before a delivery: its run, step, schema and state. */
export interface CallbackRecord {
  id: string;
  runId: string;
  /** The run's workflow and version: the definition that may declare the payload's zod schema. */
  workflow: string;
  version: string | null;
  stepId: string;
  /** The payload's JSON Schema (from the step's zod schema); null: any JSON. */
  schema: unknown;
  deadlineAt: Date | null;
  deliveredAt: Date | null;
}

/** Reads a callback by id; null when there is none. */
export async function readCallback(db: DurableDb, id: string): Promise<CallbackRecord | null> {
  const row = await db
    .selectFrom("durable_callbacks as c")
    .innerJoin("durable_runs as r", "r.id", "c.run_id")
    .select(["c.id", "c.run_id", "r.workflow", "r.version", "c.step_id", "c.schema", "c.deadline_at", "c.delivered_at"])
    .where("c.id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    runId: row.run_id,
    workflow: row.workflow,
    version: row.version ?? null,
    stepId: row.step_id,
    schema: row.schema ?? null,
    deadlineAt: row.deadline_at ? new Date(row.deadline_at) : null,
    deliveredAt: row.delivered_at ? new Date(row.delivered_at) : null,
  };
}

/**
 * Delivers a callback's payload (durable_deliver_callback): the first delivery wins; a repeat of
 * its delivery key is answered as a repeat; a run waiting on it is made due at once.
 */
export async function deliverCallback(
  db: DurableDb,
  delivery: { id: string; payloadJson: string; deliveryKey: string | null },
): Promise<CallbackDelivery> {
  const { rows } = await sql<{ outcome: CallbackDelivery }>`
    select durable_deliver_callback(${delivery.id}, ${delivery.payloadJson}::jsonb,
                                    ${delivery.deliveryKey}) as outcome`.execute(db);
  return rows[0]!.outcome;
}
