import { sql } from "kysely";
import type { DurableDb } from "./tables";

/**
 * Cancels a run that is not terminal (durable_cancel_run): the fence moves on, so its owner's next
 * write is refused. With `children: "cancel"` its non-terminal descendants are cancelled first.
 */
export async function cancelRun(
  db: DurableDb,
  id: string,
  reason: string | null,
  children: "cancel" | "keep" = "cancel",
): Promise<"cancelled" | "not_found" | "terminal"> {
  const { rows } = await sql<{ outcome: "cancelled" | "not_found" | "terminal" }>`
    select durable_cancel_run(${id}, ${reason}, ${children}) as outcome`.execute(db);
  return rows[0]!.outcome;
}
