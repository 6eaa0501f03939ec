// The figures of one metrics scrape (docs/guide/metrics.md): what `durable.metrics()` answers,
// what GET /api/durable/metrics prints as Prometheus text and what the OpenTelemetry gauges observe.

/** A run that has not finished. */
export type LiveRunStatus = "pending" | "running" | "waiting";
/** A run that has finished. */
export type FinishedRunStatus = "completed" | "failed" | "cancelled";

/**
 * One scrape. `workflow` is null for the runs of a workflow this instance does not register (an
 * old one, or another app's): they count together, so the labels are bounded by the code.
 */
export interface DurableMetrics {
  /** The window `finished` and `steps` count finished runs over, in seconds (300). */
  windowSeconds: number;
  /** The runs not finished, by workflow and status: every one, counted exactly. */
  runs: { workflow: string | null; status: LiveRunStatus; count: number }[];
  /** The runs that finished in the last `windowSeconds`, by workflow and status. */
  finished: { workflow: string | null; status: FinishedRunStatus; count: number }[];
  /** The runs a claim would take now: not finished, their wake time reached. */
  due: number;
  /** How long the longest-due of them has been due, in seconds; 0 when none is due. */
  oldestDueSeconds: number;
  /** The running runs whose lease ran out: their owner was lost (the next claim heals them). */
  expiredLeases: number;
  /** The waits of waiting runs, by step kind (sleep, signal, poll, invoke, event …). */
  waits: { kind: string; count: number }[];
  /**
   * The steps of the runs not finished or finished in the window, by workflow, and their retries
   * (each attempt after a step's first).
   */
  steps: { workflow: string | null; steps: number; retries: number }[];
}
