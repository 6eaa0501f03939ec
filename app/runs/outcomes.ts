import { sql } from "kysely";
import { type Outcome, outcomeOf } from "@/app/components/outcome";
import { outcomeLabels } from "@/app/workflows/catalog";
import type { Durable } from "@/lib/durable";

/**
 * The outcomes of the listed runs that completed (app/components/outcome.ts), by run id, for the
 * runs table. `list()` answers no outputs, and an output may be large: this reads only the few
 * fields an outcome is made of, for at most one page of runs, by primary key. An output stored
 * sealed (docs/guide/encryption.md) has no fields SQL can read: those runs' outputs come from
 * `status()`, which opens them.
 */
export async function readOutcomes(
  durable: Pick<Durable, "db" | "status">,
  runs: { id: string; workflow: string; status: string }[],
): Promise<Record<string, Outcome>> {
  const ids = runs.filter((run) => run.status === "completed").map((run) => run.id);
  if (ids.length === 0) return {};
  const { rows } = await sql<{ id: string; fields: Record<string, unknown> | null; sealed: boolean }>`
    select id, case when jsonb_typeof(output) = 'object' then jsonb_strip_nulls(jsonb_build_object(
             'status', output -> 'status', 'reason', output -> 'reason', 'approved', output -> 'approved',
             'ok', output -> 'ok', 'success', output -> 'success')) end as fields,
           jsonb_typeof(output) = 'string' and starts_with(output #>> '{}', '$denc1.') as sealed
      from durable_runs
     where id = any(${sql.val(ids)}::text[]) and jsonb_typeof(output) in ('object', 'string')`.execute(durable.db);
  const fields = await Promise.all(
    rows.map(async (row) => (row.sealed ? (await durable.status(row.id))?.output : row.fields)),
  );
  const workflowOf = new Map(runs.map((run) => [run.id, run.workflow]));
  const outcomes: Record<string, Outcome> = {};
  rows.forEach((row, index) => {
    const outcome = outcomeOf(fields[index], outcomeLabels(workflowOf.get(row.id) ?? ""));
    if (outcome) outcomes[row.id] = outcome;
  });
  return outcomes;
}
