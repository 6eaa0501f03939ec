// durable.metrics(): one scrape's figures (docs/guide/metrics.md), one statement (durable_metrics).
import type { DurableMetrics } from "../metrics-types";
import { readMetrics } from "../store";
import { assertOpen, type DurableInstance } from "./instance";

/** The window `finished` and `steps` count finished runs over: 5 minutes, a few scrapes' worth. */
export const METRICS_WINDOW_SECONDS = 300;

/** `metrics()`: labelled by the registered workflows only, so the labels stay bounded. */
export async function readDurableMetrics(instance: DurableInstance): Promise<DurableMetrics> {
  assertOpen(instance);
  return readMetrics(instance.db, instance.names, METRICS_WINDOW_SECONDS);
}
