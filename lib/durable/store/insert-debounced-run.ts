import { sql } from "kysely";
import { followupsColumn, followupsValue, msOrNull, type RunToInsert, tagsJson } from "./insert-run";
import type { DurableDb } from "./tables";

/** A workflow's debounce as the statement takes it. */
export interface DebounceParameters {
  periodMs: number;
  /** Milliseconds after the first start past which the start is not moved (null: no cap). */
  maxWaitMs: number | null;
}

/** What a debounced start answers. */
export type DebouncedRun =
  /** `id`: the run this start created, or the pending run of its key it updated (`debounced`). */
  | { id: string; workflow: string; created: boolean; debounced: boolean; sameInput: true }
  /** The id names a run already (not the key's pending one): answered as an ordinary repeat. */
  | { id: string; workflow: string; created: false; debounced: false; sameInput: boolean };

/**
 * Starts a run of a debounced workflow in one statement (docs/sql.md, "Flow control"): the key's
 * run not yet claimed, if there is one, takes this input, and its start moves to now + period,
 * capped at its first start + maxWait; else a run is inserted, due at now + period. Either way the
 * start is capped at the run's deadline and ttl too, so that a claim ends it on time there. Two racing
 * starts of one key meet on durable_runs_debounce: one inserts, the other's insert does nothing,
 * and its next try updates the run the first inserted.
 */
export async function insertDebouncedRun(
  db: DurableDb,
  run: RunToInsert,
  debounce: DebounceParameters,
  /**
   * The input as stored into run `id` when the update takes that run: sealed under its own id
   * (engine/payloads.ts). Another run the update takes gets `run.inputJson`.
   */
  replacement?: { id: string; inputJson: string },
): Promise<DebouncedRun> {
  const replacedInput = replacement
    ? sql`case when id = ${replacement.id} then ${replacement.inputJson}::jsonb else ${run.inputJson}::jsonb end`
    : sql`${run.inputJson}::jsonb`;
  for (let attempt = 0; attempt < 5; attempt++) {
    const { rows } = await sql<{ id: string; workflow: string; created: boolean; debounced: boolean }>`
      with clock as materialized (select durable_now() as now),
      updated as (
        -- One reading of the clock, as insertRun's: a start capped at the deadline is the deadline.
        update durable_runs set
          input = ${replacedInput},
          version = ${run.version ?? null},
          concurrency_key = ${run.concurrencyKey ?? null},
          rate_key = ${run.rateKey ?? null},
          priority = ${run.priority ?? 0},
          wake_at = least(clock.now + ${debounce.periodMs}::bigint * interval '1 millisecond',
                          created_at + ${msOrNull(debounce.maxWaitMs)}::bigint * interval '1 millisecond',
                          deadline_at, expire_at),
          updated_at = clock.now
          from clock
         where workflow = ${run.workflow} and debounce_key = ${run.debounceKey ?? null}
           and status = 'pending' and attempts = 0
        returning id, workflow
      ), inserted as (
        insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                                  deadline_at, expire_at, rate_key, debounce_key, priority, tags
                                  ${followupsColumn(run.followups)})
        select ${run.id}, ${run.workflow}, ${run.inputJson}::jsonb,
               least(clock.now + ${debounce.periodMs}::bigint * interval '1 millisecond', t.deadline_at, t.expire_at),
               ${run.concurrencyKey ?? null}, ${run.singletonKey ?? null}, ${run.version ?? null},
               t.deadline_at, t.expire_at,
               ${run.rateKey ?? null}, ${run.debounceKey ?? null}, ${run.priority ?? 0},
               array(select jsonb_array_elements_text(${tagsJson(run.tags)}::jsonb))
               ${followupsValue(run.followups)}
          from clock,
               lateral (select clock.now + ${msOrNull(run.deadlineInMs)}::bigint * interval '1 millisecond'
                                 as deadline_at,
                               clock.now + ${msOrNull(run.ttlMs)}::bigint * interval '1 millisecond' as expire_at) t
         where not exists (select 1 from updated)
        on conflict do nothing
        returning id, workflow
      )
      select id, workflow, false as created, true as debounced from updated
      union all
      select id, workflow, true as created, false as debounced from inserted`.execute(db);
    const row = rows[0];
    if (row) return { ...row, created: Boolean(row.created), debounced: Boolean(row.debounced), sameInput: true };
    // Either the id names a run already, or a racing start inserted the key's run after this
    // statement's snapshot: look for the first, else try again (the update now finds the second).
    const existing = await db
      .selectFrom("durable_runs")
      .select(["id", "workflow", sql<boolean>`input = ${run.inputJson}::jsonb`.as("sameInput")])
      .where("id", "=", run.id)
      .executeTakeFirst();
    if (existing) return { ...existing, created: false, debounced: false };
  }
  throw new Error(`run "${run.id}" could be neither inserted nor debounced; try again`);
}
