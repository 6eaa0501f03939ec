import type { RunStatus, RunSummary } from "../schemas";
import type { RunRecord, StepRecord } from "../store";
import type { AiUsage } from "../types";

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** What a reader should know about a run beyond its status. */
function warningsOf(run: RunRecord, registered: boolean): string[] {
  const warnings = [...run.warnings];
  if (!registered && (run.status === "pending" || run.status === "waiting" || run.status === "running")) {
    const what =
      run.version === null ? `workflow "${run.workflow}"` : `workflow "${run.workflow}" version "${run.version}"`;
    warnings.push(`${what} is not registered in this deployment; the run stays due for one that registers it`);
  }
  return warnings;
}

/** A run as `list()` shows it. */
export function toRunSummary(run: RunRecord, registered: boolean): RunSummary {
  const waits = run.status === "waiting" || run.status === "pending";
  return {
    id: run.id,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    wakeAt: waits ? iso(run.wakeAt) : null,
    waitingFor: run.status === "waiting" ? run.waitingFor : null,
    error: run.error ? { code: run.error.code, message: run.error.message } : null,
    attempts: run.attempts,
    warnings: warningsOf(run, registered),
    parentId: run.parentId,
    deadlineAt: iso(run.deadlineAt),
    tags: run.tags,
    metadata: run.metadata,
    forkedFrom: run.forkedFrom,
    continuedAs: run.continuedAs,
    continuedFrom: run.continuedFrom,
  };
}

/** A run with its steps as `status()` and the status route answer it (docs/guide/http-routes.md, "HTTP routes"). */
export function toRunStatus(run: RunRecord, steps: StepRecord[], registered: boolean): RunStatus {
  return {
    ...toRunSummary(run, registered),
    updatedAt: lastChange(run, steps).toISOString(),
    output: run.output,
    steps: steps.map((step) => ({
      id: step.stepId,
      kind: step.kind,
      status: step.status,
      attempt: step.attempt,
      startedAt: iso(step.startedAt),
      completedAt: iso(step.completedAt),
      ...(step.externalKey ? { externalKey: step.externalKey } : {}),
      error: step.error ? { code: step.error.code, message: step.error.message } : null,
      ...aiFacts(step),
      ...compositionFacts(step),
    })),
  };
}

/**
 * When the run last changed: a receipt writes its step row and leaves the run row as it was
 * (docs/sql.md, "durable_record_step"), so the latest of the run's own time and its steps' times.
 */
function lastChange(run: RunRecord, steps: StepRecord[]): Date {
  let last = run.updatedAt.getTime();
  for (const step of steps) last = Math.max(last, step.completedAt?.getTime() ?? step.startedAt?.getTime() ?? 0);
  return new Date(last);
}

/** What a page shows of a composition step: its child, its race's branches and winner, its deadline. */
function compositionFacts(step: StepRecord): Partial<RunStatus["steps"][number]> {
  const facts: Partial<RunStatus["steps"][number]> = {};
  if (step.kind === "start" && step.status === "completed") facts.childId = (step.result as { id?: string })?.id;
  if (step.kind === "invoke") facts.childId = step.targetRuns?.[0];
  if (step.branches) {
    facts.branches = step.branches.map((branch) => ({
      name: branch.name,
      kind:
        branch.signal !== undefined
          ? "signal"
          : branch.run !== undefined
            ? "run"
            : branch.callback !== undefined
              ? "callback"
              : "sleep",
      target: branch.signal ?? branch.run ?? branch.callback ?? branch.wake_at ?? "",
    }));
    const result = step.result as { branch?: string | null } | null;
    facts.winner = step.kind === "any" && step.status === "completed" ? (result?.branch ?? null) : null;
  }
  if (step.deadlineAt && (step.kind === "invoke" || step.kind === "signal" || step.kind === "callback")) {
    facts.deadlineAt = iso(step.deadlineAt);
  }
  return facts;
}

const USAGE_FIELDS = ["inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cachedInputTokens"] as const;

/** A completed AI step's token usage and model, from its receipt: what a page shows about the call. */
function aiFacts(step: StepRecord): { usage?: AiUsage; modelId?: string } {
  if (step.kind !== "ai" || step.status !== "completed") return {};
  const result = step.result as { usage?: Record<string, unknown>; response?: { modelId?: unknown } } | null;
  if (!result || typeof result !== "object") return {};
  const usage: AiUsage = {};
  for (const field of USAGE_FIELDS) {
    const value = result.usage?.[field];
    if (typeof value === "number") usage[field] = value;
  }
  const modelId = result.response?.modelId;
  return { usage, ...(typeof modelId === "string" ? { modelId } : {}) };
}
