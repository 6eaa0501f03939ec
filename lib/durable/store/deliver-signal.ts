import { sql } from "kysely";
import type { DurableDb } from "./tables";

export type DeliveryOutcome = "not_found" | "repeat" | "terminal" | "delivered";

/**
 * Delivers a signal into the run's mailbox (durable_deliver_signal): a delivery id seen before is
 * a repeat whatever the run's state, a terminal run refuses it, otherwise it queues behind the
 * deliveries of its name, and a run waiting on that name is made due at once.
 */
export async function deliverSignal(
  db: DurableDb,
  signal: { runId: string; name: string; payloadJson: string; deliveryId: string | null },
): Promise<DeliveryOutcome> {
  const { rows } = await sql<{ outcome: DeliveryOutcome }>`
    select durable_deliver_signal(${signal.runId}, ${signal.name}, ${signal.payloadJson}::jsonb,
                                  ${signal.deliveryId}) as outcome`.execute(db);
  return rows[0]!.outcome;
}
