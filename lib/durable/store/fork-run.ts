import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** What durable_fork_run answered. */
export type ForkOutcome =
  | { outcome: "forked"; copied: number }
  | { outcome: "exists" | "conflict" | "not_found" | "compacted" | "no_step" }
  | { outcome: "refused"; step: string; kind: string }
  | { outcome: "singleton_held"; holder: string | null };

/**
 * Forks run `source` from step `fromStep` into a new run `id`, in one statement
 * (durable_fork_run): its receipts before that step copied, their external keys the new run's.
 */
export async function forkRun(
  db: DurableDb,
  source: string,
  id: string,
  fromStep: string,
  deadlineInMs: number | null,
): Promise<ForkOutcome> {
  const { rows } = await sql<{ answer: ForkOutcome }>`
    select durable_fork_run(${source}, ${id}, ${fromStep}, ${deadlineInMs}::bigint) as answer`.execute(db);
  return rows[0]!.answer;
}
