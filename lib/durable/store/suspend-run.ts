import { sql } from "kysely";
import type { WaitingFor } from "../types";
import type { Followups } from "./insert-run";
import type { DurableDb } from "./tables";

/**
 * One thing a suspended body waits for. A wait already on the ledger names only its step; a new
 * one (or a poll moving on) carries its row, written by the suspension's single statement.
 */
export interface Wait {
  step_id: string;
  seq?: number;
  kind?: "sleep" | "signal" | "poll" | "invoke" | "any" | "event";
  wake_in_ms?: number | null;
  deadline_in_ms?: number | null;
  polls?: number;
  error?: unknown;
  /** A signal wait: the name it waits for (its step id may differ); an event wait: the event's name. */
  signal_name?: string;
  /** A new event wait (0016): the object its data must contain, the time events count from ("run": its start). */
  event_wait?: { match?: Record<string, unknown>; since: string };
  /** An event wait: the ids of the events the pass read, so the suspension wakes the run for any other. */
  seen_events?: string[];
  /** A race: its branches (a sleep branch as wake_in_ms, a date as wake_at) and the runs it waits on. */
  branches?: ({ name: string } & (
    | { signal: string }
    | { wake_in_ms: number }
    | { wake_at: string }
    | { run: string }
    | { callback: string }
  ))[];
  target_runs?: string[];
  /** An invoke: the child run to insert with the wait (insert-if-absent on its id). */
  start?: {
    id: string;
    workflow: string;
    input: unknown;
    version: string | null;
    concurrency_key: string | null;
    singleton_key: string | null;
    deadline_in_ms: number | null;
    /** What the child's end starts (0017). */
    followups?: Followups | null;
  };
}

/**
 * Parks the run until its earliest wake (durable_suspend_run), writing the new wait rows in the
 * same statement. False: the claim was lost and nothing was written.
 */
export async function suspendRun(
  db: DurableDb,
  runId: string,
  fence: number,
  waits: Wait[],
  waitingFor: WaitingFor,
  /** ctx.setMetadata's patches since the last write, merged in by the same statement (0011). */
  metadata: Record<string, unknown> | null = null,
): Promise<boolean> {
  // Durations are stored in whole milliseconds (a backoff factor of 1.5 makes fractions), as
  // step outcomes are (step-outcome.ts).
  const waitRows = waits.map((wait) => ({
    ...wait,
    ...(typeof wait.wake_in_ms === "number" ? { wake_in_ms: Math.round(wait.wake_in_ms) } : {}),
    ...(typeof wait.deadline_in_ms === "number" ? { deadline_in_ms: Math.round(wait.deadline_in_ms) } : {}),
  }));
  const { rows } = await sql<{ ok: boolean }>`
    select durable_suspend_run(${runId}, ${fence}::bigint, ${JSON.stringify(waitRows)}::jsonb,
                               ${JSON.stringify(waitingFor)}::jsonb,
                               ${metadata === null ? null : JSON.stringify(metadata)}::jsonb) as ok`.execute(db);
  return rows[0]!.ok;
}
