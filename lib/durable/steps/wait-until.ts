// What every waiting step shares (wait-steps.ts, poll-step.ts): a wait by the database clock that
// is waited here when short and parks the run otherwise, and the span a wait runs in.
import type { StepHost } from "../engine/run/step-host";
import type { Wait } from "../store";
import { pause } from "./pause";

/** Waits until `wakeAt` by the database clock: here if short, else by parking the run (false). */
export async function waitUntil(
  host: StepHost,
  wakeAt: Date,
  wait: Wait,
  kind: "sleep" | "poll" | "retry",
  name: string,
): Promise<boolean> {
  const ms = wakeAt.getTime() - host.now().getTime();
  if (ms <= 0) return true;
  if (!host.waitsHere(ms)) {
    void host.stop({ kind: "suspend", waits: [wait], waitingFor: { kind, name } });
    return false;
  }
  await host.track(() => pause(ms, host.signal));
  return !host.stopping;
}

/**
 * A wait executed by this execution (not answered from its receipt) runs inside a
 * `durable.step` span (engine/run/tracing.ts): "completed" when it returns, "failed" when it throws,
 * or the stop's outcome ("suspended") when it parks the run.
 */
export function traceWait<T>(
  host: StepHost,
  id: string,
  kind: "sleep" | "signal" | "poll" | "invoke" | "any" | "event",
  isReclaim: boolean,
  fn: () => Promise<T>,
): Promise<T> {
  return host.trace({ stepId: id, kind, attempt: 1, isReclaim }, fn, () => ({ outcome: "completed" }));
}
