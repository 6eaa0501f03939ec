import { sql } from "kysely";
import { findSingletonHolder } from "./find-run";
import type { DurableDb } from "./tables";

export interface RunToInsert {
  id: string;
  workflow: string;
  inputJson: string;
  /** The workflow's version (null: it declares none). */
  version?: string | null;
  /** The run's concurrency key (workflow option `concurrency`). */
  concurrencyKey?: string | null;
  /** The run's singleton key (workflow option `singleton`): one non-terminal run per key. */
  singletonKey?: string | null;
  /** Milliseconds from now (database clock) to its deadline. */
  deadlineInMs?: number | null;
  /** Milliseconds from now to the end of its ttl: not claimed by then, it fails as expired. */
  ttlMs?: number | null;
  /** Flow control (0010): the rate key ('' for the whole workflow), the debounce key, the priority. */
  rateKey?: string | null;
  debounceKey?: string | null;
  priority?: number;
  /** `start(..., { tags })` (checked by the engine). */
  tags?: readonly string[];
  /** What the run's end starts (0017; engine/lifecycle.ts): null or absent for none. */
  followups?: Followups | null;
}

/**
 * A run's follow-ups by the status that starts them (docs/sql.md, "Follow-ups"): a workflow's
 * onComplete / onFailure, or a webhook by its url. Targets only, never a secret.
 */
export type Followups = Partial<Record<"completed" | "failed" | "cancelled" | "waiting", FollowupTarget[]>>;

export type FollowupTarget =
  | { workflow: string; version: string | null; deadline_in_ms: number | null }
  | { webhook: string };

/**
 * The followups column and its value in an insert, for a run that has some; nothing at all for one
 * that has none (nearly every run), so its insert is the statement it was before 0017 and runs on
 * a schema before it (tests/postgres/narrow-row-upgrade.test.ts starts runs on 0012).
 */
export const followupsColumn = (followups: Followups | null | undefined) => (followups ? sql`, followups` : sql``);
export const followupsValue = (followups: Followups | null | undefined) =>
  followups ? sql`, ${JSON.stringify(followups)}::jsonb` : sql``;

export type InsertedRun =
  | {
      /** The workflow the id is stored under. */
      workflow: string;
      /** This call created the run. */
      created: boolean;
      /** The stored input equals this call's input (jsonb equality: key order does not matter). */
      sameInput: boolean;
      activeRunId?: undefined;
    }
  /** Nothing was inserted: another run of the workflow with the same singleton key is not terminal. */
  | { activeRunId: string; workflow?: undefined; created: false; sameInput?: undefined };

/** Tags as the statements take them: a JSON array, made a text[] in SQL (the same for pg and PGlite). */
export const tagsJson = (tags: readonly string[] | undefined): string => JSON.stringify(tags ?? []);

/** A duration as the statements take it: whole milliseconds, or null for none. */
export const msOrNull = (ms: number | null | undefined): number | null => (ms == null ? null : Math.ceil(ms));

/**
 * A run as the jsonb row the statements inserting several read (insert-runs.ts, durable_publish):
 * its columns under their SQL names, the input as JSON.
 */
export const runRow = (run: RunToInsert) => ({
  id: run.id,
  workflow: run.workflow,
  input: JSON.parse(run.inputJson),
  version: run.version ?? null,
  concurrency_key: run.concurrencyKey ?? null,
  singleton_key: run.singletonKey ?? null,
  rate_key: run.rateKey ?? null,
  priority: run.priority ?? 0,
});

/**
 * Inserts a run if no run has this id (the caller's dedup key, forever), due now on the database
 * clock. Answers the workflow the id is stored under, whether this call created it, and whether
 * an existing run was started with the same input; or, for a singleton, the active run that holds
 * its key.
 */
export async function insertRun(db: DurableDb, run: RunToInsert): Promise<InsertedRun> {
  // A run whose singleton key is held could find the holder finished by the time it looks: try again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const { rows } = await sql<{ workflow: string; created: boolean; sameInput: boolean }>`
      with clock as materialized (select durable_now() as now),
      inserted as (
        -- One reading of the clock for every time the row starts with: a deadline is exactly its
        -- duration after created_at (durable_now() reads clock_timestamp() at each call). The CTE
        -- is materialized: inlined, each clock.now became a call of its own.
        -- No parent_id: a child run is inserted only under its parent's fence, by the statement
        -- that records the step starting it (docs/sql.md, "Child runs").
        insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                                  deadline_at, expire_at, tags, rate_key, priority, created_at, updated_at
                                  ${followupsColumn(run.followups)})
        select ${run.id}, ${run.workflow}, ${run.inputJson}::jsonb, clock.now,
               ${run.concurrencyKey ?? null}, ${run.singletonKey ?? null}, ${run.version ?? null},
               clock.now + ${msOrNull(run.deadlineInMs)}::bigint * interval '1 millisecond',
               clock.now + ${msOrNull(run.ttlMs)}::bigint * interval '1 millisecond',
               array(select jsonb_array_elements_text(${tagsJson(run.tags)}::jsonb)),
               ${run.rateKey ?? null}, ${run.priority ?? 0}, clock.now, clock.now ${followupsValue(run.followups)}
          from clock
        on conflict do nothing
        returning workflow
      )
      select workflow, true as created, true as "sameInput" from inserted
      union all
      select workflow, false as created, input = ${run.inputJson}::jsonb as "sameInput" from durable_runs
       where id = ${run.id} and not exists (select 1 from inserted)`.execute(db);
    if (rows[0]) return rows[0];
    // Either a concurrent start of the same id committed after this statement's snapshot, or the
    // singleton key is held: read both now.
    const existing = await db
      .selectFrom("durable_runs")
      .select(["workflow", sql<boolean>`input = ${run.inputJson}::jsonb`.as("sameInput")])
      .where("id", "=", run.id)
      .executeTakeFirst();
    if (existing) return { ...existing, created: false };
    if (run.singletonKey == null) continue;
    const active = await findSingletonHolder(db, run.workflow, run.singletonKey);
    if (active) return { activeRunId: active, created: false };
  }
  throw new Error(`run "${run.id}" could be neither inserted nor found; try again`);
}
