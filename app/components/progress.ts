import type { RunStatus } from "@/lib/durable";

export interface Progress {
  /** "5 steps done · next step running", "3 steps done · 1 waiting", "4 steps done · 1 failed". */
  label: string;
  /** The bar: completed steps over every step the run has reached, the one in flight included. */
  percent: number;
}

/**
 * How far a run got, in words that hold at every moment. A step has no row while it executes (its
 * receipt is written when it ends), so a running run counts one step in flight beyond its rows:
 * the words say "next step running" rather than claim every step is done, and the bar does not
 * reach the end until the run completes. `map` may run several at once, so no count is guessed.
 */
export function progressOf(run: Pick<RunStatus, "status" | "steps">): Progress {
  const count = (status: RunStatus["steps"][number]["status"]) => run.steps.filter((s) => s.status === status).length;
  const done = count("completed");
  const running = count("running");
  const inFlight = running === 0 && run.status === "running";
  const parts = [done === 0 ? "No steps done yet" : `${done} step${done === 1 ? "" : "s"} done`];
  if (running > 0) parts.push(`${running} running`);
  else if (inFlight) parts.push("next step running");
  const waiting = count("waiting");
  if (waiting > 0) parts.push(`${waiting} waiting`);
  const failed = count("failed");
  if (failed > 0) parts.push(`${failed} failed`);
  const total = run.steps.length + (inFlight ? 1 : 0);
  const percent = run.status === "completed" ? 100 : total === 0 ? 0 : Math.round((done / total) * 100);
  return { label: parts.join(" · "), percent };
}
