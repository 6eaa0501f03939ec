import { sql, type Kysely } from "kysely";
import { type Outcome, outcomeOf } from "@/app/components/outcome";
import { outcomeLabels } from "@/app/workflows/catalog";

/**
 * The outcomes of the listed runs that completed (app/components/outcome.ts), by run id, for the
 * runs table. `list()` answers no outputs, and an output may be large: this reads only the few
 * fields an outcome is made of, for at most one page of runs, by primary key.
 */
export async function readOutcomes(
  db: Kysely<any>,
  runs: { id: string; workflow: string; status: string }[],
): Promise<Record<string, Outcome>> {
  const ids = runs.filter((run) => run.status === "completed").map((run) => run.id);
  if (ids.length === 0) return {};
  const { rows } = await sql<{ id: string; fields: Record<string, unknown> }>`
    select id, jsonb_strip_nulls(jsonb_build_object(
             'status', output -> 'status', 'reason', output -> 'reason', 'approved', output -> 'approved',
             'ok', output -> 'ok', 'success', output -> 'success')) as fields
      from durable_runs
     where id = any(${sql.val(ids)}::text[]) and jsonb_typeof(output) = 'object'`.execute(db);
  const workflowOf = new Map(runs.map((run) => [run.id, run.workflow]));
  const outcomes: Record<string, Outcome> = {};
  for (const row of rows) {
    const outcome = outcomeOf(row.fields, outcomeLabels(workflowOf.get(row.id) ?? ""));
    if (outcome) outcomes[row.id] = outcome;
  }
  return outcomes;
}
