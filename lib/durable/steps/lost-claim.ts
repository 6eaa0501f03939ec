// What a step does when a heartbeat of its run does not answer "owned" (docs/rules.md, rule 11a):
// the claim is gone, so the step notes the refusal, stops the execution as a lost owner, and
// writes nothing more. `s.heartbeat()` and a Drizzle tx step's first look at its run share it.
import type { Execution } from "../engine/execution";
import type { StepRecorder } from "../engine/step-recorder";

/** Stops the execution after heartbeat state `state` (not "owned"); returns the reason it gave. */
export function stopAsLostOwner(exec: Execution, recorder: StepRecorder, id: string, state: string | null): string {
  const reason = state === "cancelled" ? "cancelled" : state === "expired" ? "lease expired" : "lease lost";
  recorder.noteFenceRejected(id, "heartbeat", reason);
  exec.requestStop({ kind: "lost", reason });
  return reason;
}
