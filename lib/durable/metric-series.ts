// The metrics' names, help and samples (docs/guide/metrics.md): one table, a leaf every layer may
// import, that the Prometheus text (http/prometheus.ts) and the OpenTelemetry gauges
// (engine/meter.ts) both read, so the two answer the same figures under the same names.
import type { DurableMetrics } from "./metrics-types";

/** The window finished runs are counted over: 5 minutes, a few scrapes' worth (docs/sql.md, "durable_metrics"). */
export const METRICS_WINDOW_SECONDS = 300;

/** One sample: its labels (a workflow the instance does not register has no workflow label). */
export interface MetricSample {
  labels: Record<string, string>;
  value: number;
}

export interface MetricSeries {
  name: string;
  help: string;
  /** OpenTelemetry's unit: "1" for a count, "s" for seconds. */
  unit: "1" | "s";
  samples(metrics: DurableMetrics): MetricSample[];
}

/** `{ workflow }` for a registered workflow, `{}` for the others. */
const byWorkflow = (workflow: string | null): Record<string, string> => (workflow === null ? {} : { workflow });
const one = (value: number): MetricSample[] => [{ labels: {}, value }];

export const METRIC_SERIES: readonly MetricSeries[] = [
  {
    name: "durable_runs",
    help: "Runs not finished, by workflow and status (pending, running, waiting).",
    unit: "1",
    samples: (m) => m.runs.map((r) => ({ labels: { ...byWorkflow(r.workflow), status: r.status }, value: r.count })),
  },
  {
    name: "durable_runs_finished_recent",
    help:
      `Runs finished in the last ${METRICS_WINDOW_SECONDS} seconds, by workflow and status ` +
      "(completed, failed, cancelled).",
    unit: "1",
    samples: (m) =>
      m.finished.map((r) => ({ labels: { ...byWorkflow(r.workflow), status: r.status }, value: r.count })),
  },
  {
    name: "durable_due_runs",
    help: "Runs due now: not finished, their wake time reached (the backlog a claim takes from).",
    unit: "1",
    samples: (m) => one(m.due),
  },
  {
    name: "durable_oldest_due_run_age_seconds",
    help: "How long the longest-due run has been due, in seconds; 0 when none is due.",
    unit: "s",
    samples: (m) => one(m.oldestDueSeconds),
  },
  {
    name: "durable_expired_leases",
    help: "Running runs whose lease ran out (their owner was lost; the next claim heals them).",
    unit: "1",
    samples: (m) => one(m.expiredLeases),
  },
  {
    name: "durable_waits",
    help: "Waits of waiting runs, by step kind (sleep, signal, poll, invoke, event ...).",
    unit: "1",
    samples: (m) => m.waits.map((w) => ({ labels: { kind: w.kind }, value: w.count })),
  },
  {
    name: "durable_steps",
    help: `Steps of the runs not finished or finished in the last ${METRICS_WINDOW_SECONDS} seconds, by workflow.`,
    unit: "1",
    samples: (m) => m.steps.map((s) => ({ labels: byWorkflow(s.workflow), value: s.steps })),
  },
  {
    name: "durable_step_retries",
    help: "Retries (attempts after a step's first) of the same steps, by workflow.",
    unit: "1",
    samples: (m) => m.steps.map((s) => ({ labels: byWorkflow(s.workflow), value: s.retries })),
  },
];
