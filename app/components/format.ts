// Formatting shared by server and client components. Deterministic (UTC, no locale), so a client
// component renders the same text on the server and in the browser.

/** 850 ms · 1.2 s · 42 s · 3 min 4 s · 2 h 5 min · 6 d 23 h */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 10_000) return `${(abs / 1000).toFixed(1)} s`;
  const s = Math.round(abs / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** "in 6 d 23 h" / "3 s ago" / "now". */
export function formatRelative(iso: string, now: number): string {
  const delta = Date.parse(iso) - now;
  if (Math.abs(delta) < 1000) return "now";
  return delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(delta)} ago`;
}

/** "2025-03-01 12:03:04 UTC" */
export function formatTimestamp(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** "1,234,567": thousands separated by commas, whatever the locale. */
export function formatCount(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A model call's token usage as RunStatus reports it; the total is input + output when not reported. */
export function tokensOf(usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number }) {
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  return { input, output, total: usage.totalTokens ?? input + output };
}

/** "12:03:04" (UTC) */
export const formatClock = (iso: string) => iso.slice(11, 19);

export const STEP_KIND_LABELS: Record<string, string> = {
  run: "external call · at least once",
  tx: "database transaction · exactly once",
  value: "journaled value",
  sleep: "sleep",
  signal: "waits for a signal",
  poll: "polls until ready",
  ai: "model call",
  invoke: "child run · waits for its end",
  start: "child run · started, not waited for",
  any: "race · the first branch wins",
  callback: "callback URL",
  patch: "patch marker · took the patched path",
};
