import * as z from "zod";

// zod owns the enums: the SQL check constraints are compared with these in a test.
export const runStatusValues = z.enum(["pending", "running", "waiting", "completed", "failed", "cancelled"]);
export const stepStatusValues = z.enum(["running", "waiting", "completed", "failed"]);
export const stepKindValues = z.enum([
  "run",
  "tx",
  "value",
  "sleep",
  "signal",
  "poll",
  "ai",
  "invoke",
  "start",
  "any",
  "callback",
  "patch",
  "event",
]);
export const waitKindValues = z.enum(["signal", "sleep", "poll", "retry", "run", "any", "callback", "event"]);
export const terminalStatuses = ["completed", "failed", "cancelled"] as const;

const errorShape = z.object({ code: z.string(), message: z.string() });

export const stepStatusSchema = z.object({
  id: z.string(),
  kind: stepKindValues,
  status: stepStatusValues,
  attempt: z.number().int(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  externalKey: z.string().optional(),
  error: errorShape.nullable(),
  /** An AI step's token usage and the model that answered, once it completed (docs/guide/ai-steps.md, "AI steps"). */
  usage: z
    .object({
      inputTokens: z.number().optional(),
      outputTokens: z.number().optional(),
      totalTokens: z.number().optional(),
      reasoningTokens: z.number().optional(),
      cachedInputTokens: z.number().optional(),
    })
    .optional(),
  modelId: z.string().optional(),
  /** An `invoke` or `start`: the child run's id. */
  childId: z.string().optional(),
  /** A race (`waitForAny`, `waitForCallback`, `invoke`): its branches, and the winner once decided. */
  branches: z
    .array(
      z.object({
        name: z.string(),
        kind: z.enum(["signal", "sleep", "run", "callback"]),
        /** The signal name, the wake time (ISO 8601), the run id, or the callback id (durable_callbacks.id). */
        target: z.string(),
      }),
    )
    .optional(),
  winner: z.string().nullable().optional(),
  /** A wait's deadline (an invoke's timeout, a signal wait's, a callback's), ISO 8601. */
  deadlineAt: z.string().nullable().optional(),
});

/** What `status()` and `GET /api/durable/runs/{id}` answer (README, "HTTP routes"). */
export const runStatusSchema = z.object({
  id: z.string(),
  workflow: z.string(),
  /** The workflow's version the run started on (null: it declares none). */
  version: z.string().nullable(),
  status: runStatusValues,
  createdAt: z.string(),
  updatedAt: z.string(),
  wakeAt: z.string().nullable(),
  waitingFor: z.object({ kind: waitKindValues, name: z.string() }).nullable(),
  output: z.unknown(),
  error: errorShape.nullable(),
  attempts: z.number().int(),
  warnings: z.array(z.string()),
  /** The run whose `invoke` or `start` started this one (null: none; always present in answers). */
  parentId: z.string().nullable().optional(),
  /** Past it the run fails with `deadline_exceeded` (ISO 8601; null: none; always present in answers). */
  deadlineAt: z.string().nullable().optional(),
  /** `start(..., { tags })` (always present in answers). */
  tags: z.array(z.string()).optional(),
  /** What `ctx.setMetadata` merged in (always present in answers). */
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** A fork's source run and the step it was forked from (null: not a fork; always present in answers). */
  forkedFrom: z.object({ runId: z.string(), stepId: z.string() }).nullable().optional(),
  /** `ctx.continueAsNew`: the run this one ended into, and the run it continues (null: none; always present). */
  continuedAs: z.string().nullable().optional(),
  continuedFrom: z.string().nullable().optional(),
  steps: z.array(stepStatusSchema),
});
/** A run's status; `TOutput` types `output` when the call named the workflow (`status(id, { workflow })`). */
export type RunStatus<TOutput = unknown> = Omit<z.infer<typeof runStatusSchema>, "output"> & { output: TOutput | null };
export type RunStatusValue = z.infer<typeof runStatusValues>;

/** What `tick()` and `GET /api/durable/tick` answer. */
export const tickReportSchema = z.object({
  claimed: z.number().int(),
  completed: z.number().int(),
  waiting: z.number().int(),
  failed: z.number().int(),
  yielded: z.number().int(),
  healed: z.number().int(),
  /** Runs started for due schedule slots by this tick. */
  scheduled: z.number().int(),
  /** Further tick invocations this tick's route called (fan-out; 0 from `durable.tick()` itself). */
  fannedOut: z.number().int(),
  /** Runs compacted or deleted and events deleted by this tick's retention slice. */
  compacted: z.number().int(),
  budgetLeftMs: z.number(),
  /**
   * When the earliest unfinished run of this deployment's workflows may next be claimed, by the
   * database clock (ISO 8601): the earliest wake time of a sleep, retry delay or wait deadline, or
   * the end of a running run's lease; null when none waits on time. Read as the tick ends.
   */
  nextWakeAt: z.string().nullable(),
  /**
   * Milliseconds from the database clock, as the tick ended, until `nextWakeAt` (0 or less: a run
   * is due now that this tick did not take, e.g. held by a concurrency limit); null with it. What
   * the local cron of `next dev` waits for before its next call; a caller's own clock plays no part.
   */
  nextWakeInMs: z.number().nullable(),
  /** Why a tick did less than it could, e.g. a budget too small to claim anything. */
  warnings: z.array(z.string()),
});
export type TickReport = z.infer<typeof tickReportSchema>;

/** One receipt of a run's ledger: its status as `status()` shows it, its seq, result and whole stored error. */
export type LedgerStep = Omit<RunStatus["steps"][number], "error"> & {
  /** The order the step was first reached in (0, 1, …; a step reached but never written leaves a gap). */
  seq: number;
  /** What the receipt answers a replay: the step's result (null while it has none). */
  result: unknown;
  error: { code: string; message: string; name?: string } | null;
};

/**
 * `status(id, { ledger: true })`: the status with the run's input and every receipt's result,
 * opened: a recorded run, what `replayTest` replays (docs/guide/edit-and-resume.md).
 */
export type RunLedger<TOutput = unknown> = Omit<RunStatus<TOutput>, "steps"> & { input: unknown; steps: LedgerStep[] };

/** One row of `list()`: a run without its steps. */
export type RunSummary = Omit<RunStatus, "steps" | "output">;
