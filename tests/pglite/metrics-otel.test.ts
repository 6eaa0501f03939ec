// The metrics as OpenTelemetry gauges (docs/guide/metrics.md, "OpenTelemetry"): registered when a
// meter provider is, fed by durable.metrics()'s one statement, removed by close().
import { metrics } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow } from "@/lib/durable";

/** A reader collected on demand; delta temporality, so a collection shows only what was observed in it. */
class PullReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
  }
  protected async onShutdown() {}
  protected async onForceFlush() {}
}

const job = defineWorkflow({ name: "job", input: z.object({}), run: async () => 1 });

/** The collected points, by metric name: `{ attributes, value }` each. */
async function collect(reader: MetricReader) {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const points = new Map<string, { attributes: Record<string, unknown>; value: number }[]>();
  for (const scope of (resourceMetrics as ResourceMetrics).scopeMetrics) {
    if (scope.scope.name !== "durable-next") continue;
    for (const metric of scope.metrics) {
      points.set(
        metric.descriptor.name,
        metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value as number })),
      );
    }
  }
  return points;
}

describe("OpenTelemetry metrics", () => {
  afterEach(() => metrics.disable());

  it("observes the same figures as durable.metrics() under the same names, until close()", async () => {
    const reader = new PullReader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    const db = await connect("memory://");
    const durable = createDurable({ db, workflows: [job], secrets: { durable: "t" }, log: () => {} });
    await durable.migrate();
    await durable.start(job, {}, { id: "j1" });
    await durable.start(job, {}, { id: "j2" });
    await sql`insert into durable_runs (id, workflow, status, input, wake_at)
              values ('g', 'gone', 'waiting', '{}', 'infinity')`.execute(db);

    const points = await collect(reader);
    const read = await durable.metrics();
    expect(points.get("durable_runs")).toEqual(
      expect.arrayContaining([
        { attributes: { workflow: "job", status: "pending" }, value: 2 },
        { attributes: { status: "waiting" }, value: 1 },
      ]),
    );
    expect(points.get("durable_runs")).toHaveLength(read.runs.length);
    expect(points.get("durable_due_runs")).toEqual([{ attributes: {}, value: read.due }]);
    expect(read.due).toBe(2);
    expect(points.get("durable_expired_leases")).toEqual([{ attributes: {}, value: 0 }]);
    expect(points.get("durable_oldest_due_run_age_seconds")![0]!.value).toBeGreaterThanOrEqual(0);

    await durable.close();
    // Closed, the instance observes nothing more.
    const after = await collect(reader);
    expect(after.get("durable_due_runs") ?? []).toEqual([]);
  });

  it("registers nothing when no meter provider is registered", async () => {
    const reader = new PullReader();
    const db = await connect("memory://");
    const durable = createDurable({ db, workflows: [job], secrets: { durable: "t" }, log: () => {} });
    await durable.migrate();
    // A provider registered after createDurable gets no gauges from this instance.
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    expect((await collect(reader)).size).toBe(0);
    await durable.close();
  });
});
