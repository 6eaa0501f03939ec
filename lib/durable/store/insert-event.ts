import type { DurableDb } from "./tables";

/**
 * Notes an annotation on a run's timeline. Used where the statement that would have noted it ran
 * inside a transaction that then rolled back (a `tx` step whose receipt lost its fence or its
 * race): the note is written again after the rollback, on its own.
 */
export async function insertEvent(
  db: DurableDb,
  event: { runId: string; kind: string; stepId: string | null; fence: number; data: Record<string, unknown> },
): Promise<void> {
  await db
    .insertInto("durable_events")
    .values({
      run_id: event.runId,
      kind: event.kind,
      step_id: event.stepId,
      fence: event.fence,
      data: JSON.stringify(event.data),
    })
    .execute();
}
