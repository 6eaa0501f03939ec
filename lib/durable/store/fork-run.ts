import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** What durable_fork_run answered. */
export type ForkOutcome =
  | { outcome: "forked"; copied: number }
  | { outcome: "exists" | "conflict" | "not_found" | "compacted" | "no_step" }
  | { outcome: "refused"; step: string; kind: string }
  | { outcome: "bad_override"; step: string; kind: string | null }
  | { outcome: "singleton_held"; holder: string | null };

/** A receipt the fork holds in place of the source's: its result's stored JSON text (sealed) and plain size. */
export interface ForkOverride {
  step: string;
  resultJson: string;
  bytes: number;
}

/**
 * Forks run `source` from step `fromStep` into a new run `id`, in one statement
 * (durable_fork_run): its receipts before that step copied, their external keys the new run's,
 * and the `overrides` as completed receipts with their results, each noted `step.edited` with
 * `reason` (docs/guide/edit-and-resume.md).
 */
export async function forkRun(
  db: DurableDb,
  source: string,
  id: string,
  fromStep: string,
  deadlineInMs: number | null,
  edit: { overrides: ForkOverride[]; reason: string | null } = { overrides: [], reason: null },
): Promise<ForkOutcome> {
  // The results go in as jsonb inside one array: each is already JSON text, spliced as raw JSON.
  const overrides = `[${edit.overrides
    .map((o) => `{"step":${JSON.stringify(o.step)},"bytes":${o.bytes},"result":${o.resultJson}}`)
    .join(",")}]`;
  const { rows } = await sql<{ answer: ForkOutcome }>`
    select durable_fork_run(${source}, ${id}, ${fromStep}, ${deadlineInMs}::bigint, ${overrides}::jsonb,
                            ${edit.reason}::text) as answer`.execute(db);
  return rows[0]!.answer;
}
