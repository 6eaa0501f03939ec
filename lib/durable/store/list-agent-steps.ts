import type { DurableDb } from "./tables";

/** A step of an agent (`ctx.step.ai.agent`) with its stored result: a turn, an approval wait, a tool call. */
export interface AgentStepRecord {
  stepId: string;
  kind: string;
  status: string;
  result: unknown;
}

/**
 * The steps of a run whose ids an agent makes (`…/turn-<n>`, `…/turn-<n>/approval-<k>`,
 * `…/turn-<n>/tool-<call>`, and `…/tool-<call>` of earlier releases), in seq order, at most
 * `limit`: one range of the steps' primary key, for the page that shows a run's pending tool
 * approvals (docs/guide/agents.md, "Approvals").
 */
export async function listAgentSteps(db: DurableDb, runId: string, limit: number): Promise<AgentStepRecord[]> {
  const rows = await db
    .selectFrom("durable_steps")
    .select(["step_id", "kind", "status", "result"])
    .where("run_id", "=", runId)
    .where((eb) => eb.or([eb("step_id", "like", "%/turn-%"), eb("step_id", "like", "%/tool-%")]))
    .orderBy("seq")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ stepId: row.step_id, kind: row.kind, status: row.status, result: row.result ?? null }));
}
