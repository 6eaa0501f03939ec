// The metrics as OpenTelemetry observable gauges (docs/guide/metrics.md, "OpenTelemetry"), through
// `@opentelemetry/api` only: when a meter provider is registered as createDurable runs, one gauge
// per metric of metric-series.ts, all fed by one batch callback, so a collection is one
// durable_metrics statement. With no provider nothing is registered and nothing runs.
import { createNoopMeter, type Meter, metrics, type ObservableGauge } from "@opentelemetry/api";
import { METRIC_SERIES } from "../metric-series";
import { readDurableMetrics } from "./metrics";
import type { DurableInstance } from "./instance";
import { TRACER_NAME, TRACER_VERSION } from "./run/tracing";

/** The class of the meter the API answers while no provider is registered. */
const NoopMeter = createNoopMeter().constructor;

/**
 * Registers the gauges on the global provider's meter, if one is registered; `close()` (the
 * instance's closing signal) removes the callback. A collection that fails is logged and observes
 * nothing: a scrape never throws into the exporter.
 */
export function observeMetrics(instance: DurableInstance): void {
  const meter: Meter = metrics.getMeter(TRACER_NAME, TRACER_VERSION);
  if (meter instanceof NoopMeter) return;
  const gauges = new Map<string, ObservableGauge>(
    METRIC_SERIES.map((s) => [s.name, meter.createObservableGauge(s.name, { description: s.help, unit: s.unit })]),
  );
  const observe = async (observer: Parameters<Parameters<Meter["addBatchObservableCallback"]>[0]>[0]) => {
    if (instance.state.closed) return;
    try {
      const read = await readDurableMetrics(instance);
      for (const series of METRIC_SERIES) {
        const gauge = gauges.get(series.name)!;
        for (const sample of series.samples(read)) observer.observe(gauge, sample.value, sample.labels);
      }
    } catch (e) {
      instance.log(`reading the metrics for OpenTelemetry failed: ${(e as Error)?.message ?? e}`);
    }
  };
  meter.addBatchObservableCallback(observe, [...gauges.values()]);
  instance.closing.signal.addEventListener(
    "abort",
    () => meter.removeBatchObservableCallback(observe, [...gauges.values()]),
    {
      once: true,
    },
  );
}
