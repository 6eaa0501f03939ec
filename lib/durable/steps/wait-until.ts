// What every waiting step shares (wait-steps.ts, poll-step.ts): a wait by the database clock that
// is waited here when short and parks the run otherwise, and the span a wait runs in.
import type { Execution } from "../engine/run/execution";
import type { StepRecorder } from "../engine/run/step-recorder";
import type { Wait } from "../store";
import { pause } from "./pause";

/** Waits until `wakeAt` by the database clock: here if short, else by parking the run (false). */
export async function waitUntil(
  exec: Execution,
  wakeAt: Date,
  wait: Wait,
  kind: "sleep" | "poll" | "retry",
  name: string,
): Promise<boolean> {
  const ms = wakeAt.getTime() - exec.dbNow().getTime();
  if (ms <= 0) return true;
  if (!exec.waitsInProcess(ms)) {
    exec.requestStop({ kind: "suspend", waits: [wait], waitingFor: { kind, name } });
    return false;
  }
  await exec.track(() => pause(ms, exec.abort.signal));
  return !exec.isStopping;
}

/**
 * A wait executed by this execution (not answered from its receipt) runs inside a
 * `durable.step` span (engine/run/tracing.ts): "completed" when it returns, "failed" when it throws,
 * or the stop's outcome ("suspended") when it parks the run.
 */
export function traceWait<T>(
  recorder: StepRecorder,
  id: string,
  kind: "sleep" | "signal" | "poll" | "invoke" | "any",
  isReclaim: boolean,
  fn: () => Promise<T>,
): Promise<T> {
  return recorder.traced({ stepId: id, kind, attempt: 1, isReclaim }, fn, () => ({ outcome: "completed" }));
}
