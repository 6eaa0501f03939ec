// The Prometheus text exposition format, version 0.0.4 (docs/guide/metrics.md): a `# HELP` and a
// `# TYPE` line per metric, then one line per sample, label values escaped.
import type { DurableMetrics } from "../metrics-types";
import { METRIC_SERIES } from "../metric-series";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A label value as the format quotes it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** HELP text escapes backslash and line feed only. */
const escapeHelp = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function sampleLine(name: string, labels: Record<string, string>, value: number): string {
  const pairs = Object.entries(labels).map(([key, v]) => `${key}="${escapeLabelValue(v)}"`);
  return `${name}${pairs.length > 0 ? `{${pairs.join(",")}}` : ""} ${value}`;
}

/** Every metric of one scrape as Prometheus text, each a gauge, ending with a line feed. */
export function toPrometheusText(metrics: DurableMetrics): string {
  const lines: string[] = [];
  for (const series of METRIC_SERIES) {
    lines.push(`# HELP ${series.name} ${escapeHelp(series.help)}`, `# TYPE ${series.name} gauge`);
    for (const sample of series.samples(metrics)) lines.push(sampleLine(series.name, sample.labels, sample.value));
  }
  return `${lines.join("\n")}\n`;
}
