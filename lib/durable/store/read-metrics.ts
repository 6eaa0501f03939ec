import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** One scrape's figures as the store reads them; the engine answers them as DurableMetrics (metrics-types.ts). */
export interface MetricsRead {
  windowSeconds: number;
  runs: { workflow: string | null; status: "pending" | "running" | "waiting"; count: number }[];
  finished: { workflow: string | null; status: "completed" | "failed" | "cancelled"; count: number }[];
  due: number;
  oldestDueSeconds: number;
  expiredLeases: number;
  waits: { kind: string; count: number }[];
  steps: { workflow: string | null; steps: number; retries: number }[];
}

/** What durable_metrics answers (jsonb: counts as numbers, no age when nothing is due). */
type MetricsRow = Omit<MetricsRead, "windowSeconds" | "oldestDueSeconds"> & { oldestDueSeconds: number | null };

/**
 * One scrape's figures in one statement (durable_metrics; docs/sql.md, "durable_metrics"): the live
 * runs, those finished in the last `windowSeconds`, labelled by workflow only when `workflows` (the
 * registered names) lists it.
 */
export async function readMetrics(
  db: DurableDb,
  workflows: readonly string[],
  windowSeconds: number,
): Promise<MetricsRead> {
  const { rows } = await sql<{ metrics: MetricsRow }>`
    select durable_metrics(${JSON.stringify(workflows)}::jsonb, ${windowSeconds}::integer) as metrics`.execute(db);
  const read = rows[0]!.metrics;
  return {
    windowSeconds,
    runs: read.runs.map((r) => ({ workflow: r.workflow, status: r.status, count: Number(r.count) })),
    finished: read.finished.map((r) => ({ workflow: r.workflow, status: r.status, count: Number(r.count) })),
    due: Number(read.due),
    oldestDueSeconds: Math.max(0, Number(read.oldestDueSeconds ?? 0)),
    expiredLeases: Number(read.expiredLeases),
    waits: read.waits.map((w) => ({ kind: w.kind, count: Number(w.count) })),
    steps: read.steps.map((s) => ({ workflow: s.workflow, steps: Number(s.steps), retries: Number(s.retries) })),
  };
}
