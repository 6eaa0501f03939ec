/**
 * What came of a completed run, in its workflow's own words. "Completed" says only that the run
 * ended; a checkout that timed out and refunded completed too. The dashboard reads the outcome from
 * the run's output, by one convention every demo follows:
 *   - a string `status` ("confirmed", "cancelled", "payment_failed", "answered", …), with an
 *     optional string `reason`;
 *   - else a boolean `approved`, `ok` or `success` (with `reason`).
 * The tone comes from the words of the status (a refund, a rejection, an expiry, a failure or a
 * cancellation is "bad"; a confirmation, an execution, an answer or an approval "good"; anything
 * else "neutral"); a demo may give a status a label of its own (`DemoInfo.outcomes`). An output
 * that follows neither convention has no outcome, and the page shows only the status.
 */
export type OutcomeTone = "good" | "bad" | "neutral";

export interface Outcome {
  /** "Order confirmed", "Cancelled and refunded", "Payment failed"; else the status in words. */
  label: string;
  tone: OutcomeTone;
  /** The output's `reason`, when it has one. */
  detail: string | null;
}

const BAD = new Set([
  "aborted",
  "cancelled",
  "canceled",
  "declined",
  "denied",
  "error",
  "expired",
  "failed",
  "refunded",
  "rejected",
  "timeout",
  "timed",
]);
const GOOD = new Set([
  "answered",
  "approved",
  "completed",
  "confirmed",
  "delivered",
  "done",
  "executed",
  "exported",
  "ok",
  "paid",
  "sent",
  "shipped",
  "succeeded",
  "success",
]);

/** The outcome an output states, or null; `labels` maps a status to the words a demo prefers. */
export function outcomeOf(output: unknown, labels: Record<string, string> = {}): Outcome | null {
  if (!output || typeof output !== "object" || Array.isArray(output)) return null;
  const fields = output as Record<string, unknown>;
  const detail = typeof fields.reason === "string" && fields.reason.trim() ? fields.reason.trim().slice(0, 300) : null;
  if (typeof fields.status === "string" && fields.status.trim()) {
    const status = fields.status.trim();
    return { label: labels[status] ?? inWords(status), tone: toneOf(status), detail };
  }
  for (const key of ["approved", "ok", "success"] as const) {
    const value = fields[key];
    if (typeof value !== "boolean") continue;
    const label = key === "approved" ? (value ? "Approved" : "Not approved") : value ? "Succeeded" : "Did not succeed";
    return { label, tone: value ? "good" : "bad", detail };
  }
  return null;
}

function toneOf(status: string): OutcomeTone {
  const words = inWords(status)
    .toLowerCase()
    .split(/[^a-z]+/);
  if (words.some((w) => BAD.has(w))) return "bad";
  if (words.some((w) => GOOD.has(w))) return "good";
  return "neutral";
}

/** "payment_failed" → "Payment failed", "timedOut" → "Timed out". */
function inWords(status: string): string {
  const text = status
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return text.charAt(0).toUpperCase() + text.slice(1);
}
