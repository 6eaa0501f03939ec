import type { RunStatus } from "@/lib/durable";
import { formatDuration, formatTimestamp } from "./format";

/**
 * A run's deadline (docs/guide/dashboard.md, "Composition on the run page"), counting down with
 * the page's clock: "in 9 min 42 s" while the run goes on, then "met" or "passed". `deadlineAt` is
 * the database clock's and `now` the browser's, so a browser clock that is off moves it by as much.
 */
export function Deadline({ run, now, terminal }: { run: RunStatus; now: number; terminal: boolean }) {
  if (!run.deadlineAt) return null;
  const at = Date.parse(run.deadlineAt);
  const passed = run.error?.code === "deadline_exceeded" || (!terminal && at <= now);
  const [value, state] = passed
    ? ["passed", "passed"]
    : terminal
      ? ["met", "met"]
      : [`in ${formatDuration(at - now)}`, "counting"];
  return (
    <p className={`run-deadline deadline-${state}`} data-testid="deadline" data-deadline-state={state}>
      <span className="deadline-label">Deadline</span>{" "}
      <strong className="deadline-value" data-testid="deadline-value" suppressHydrationWarning>
        {value}
      </strong>{" "}
      <span className="muted small">{formatTimestamp(run.deadlineAt)}</span>
    </p>
  );
}
