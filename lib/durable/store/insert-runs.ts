import { sql } from "kysely";
import { followupsColumn, followupsValue, msOrNull, type RunToInsert, runRow, tagsJson } from "./insert-run";
import type { DurableDb } from "./tables";

/** What `insertRuns` answers for one run, in the order given. */
export interface InsertedOne {
  id: string;
  /** This statement created it. */
  created: boolean;
  /** The workflow the id is stored under; null: no run has the id (its singleton key is held). */
  workflow: string | null;
  /** The stored input equals this one's. */
  sameInput: boolean;
}

/**
 * Inserts many runs of one workflow in one statement (`durable.startMany`), each if no run has its
 * id, due now on the database clock, and answers each: created, or the run the id names already
 * (its workflow and whether its input is the same), or neither when its singleton key is held.
 */
export async function insertRuns(
  db: DurableDb,
  runs: readonly RunToInsert[],
  options: { deadlineInMs?: number | null; ttlMs?: number | null; tags?: readonly string[] } = {},
): Promise<InsertedOne[]> {
  const rows = runs.map((run, n) => ({ n, ...runRow(run) }));
  const { rows: answered } = await sql<InsertedOne>`
    with given as (
      select (r ->> 'n')::int as n, r ->> 'id' as id, r ->> 'workflow' as workflow, r -> 'input' as input,
             r ->> 'version' as version, r ->> 'concurrency_key' as concurrency_key,
             r ->> 'singleton_key' as singleton_key, r ->> 'rate_key' as rate_key,
             (r ->> 'priority')::int as priority
        from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) r
    ), clock as materialized (
      -- One reading of the clock for every time the rows start with (as insertRun, materialized).
      select durable_now() as now
    ), inserted as (
      insert into durable_runs (id, workflow, input, wake_at, concurrency_key, singleton_key, version,
                                deadline_at, expire_at, tags, rate_key, priority, created_at, updated_at
                                ${followupsColumn(runs[0]?.followups)})
      select id, workflow, input, clock.now, concurrency_key, singleton_key, version,
             clock.now + ${msOrNull(options.deadlineInMs)}::bigint * interval '1 millisecond',
             clock.now + ${msOrNull(options.ttlMs)}::bigint * interval '1 millisecond',
             array(select jsonb_array_elements_text(${tagsJson(options.tags)}::jsonb)), rate_key, priority,
             clock.now, clock.now ${followupsValue(runs[0]?.followups)}
        from given, clock order by n
      on conflict do nothing
      returning id
    )
    select g.id, (i.id is not null) as created,
           coalesce(case when i.id is not null then g.workflow end, r.workflow) as workflow,
           (i.id is not null or r.input = g.input) as "sameInput"
      from given g
      left join inserted i on i.id = g.id
      left join durable_runs r on r.id = g.id and i.id is null
     order by g.n`.execute(db);
  return answered.map((row) => ({ ...row, created: Boolean(row.created), sameInput: Boolean(row.sameInput) }));
}
