// durable.metrics(): one scrape's figures (docs/guide/metrics.md), one statement (durable_metrics).
import { METRICS_WINDOW_SECONDS } from "../metric-series";
import type { DurableMetrics } from "../metrics-types";
import { readMetrics } from "../store";
import { assertOpen, type DurableInstance } from "./instance";

/** `metrics()`: labelled by the registered workflows only, so the labels stay bounded. */
export async function readDurableMetrics(instance: DurableInstance): Promise<DurableMetrics> {
  assertOpen(instance);
  return readMetrics(instance.db, instance.names, METRICS_WINDOW_SECONDS);
}
