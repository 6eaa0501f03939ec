// What a step does when a heartbeat of its run does not answer "owned" (docs/rules.md, rule 11a):
// the claim is gone, so the step notes the refusal, stops the execution as a lost owner, and
// writes nothing more. `s.heartbeat()` and a Drizzle tx step's first look at its run share it.
import { type Execution, PAST_RUN_DEADLINE } from "../engine/run/execution";
import type { StepRecorder } from "../engine/run/step-recorder";

/** Stops the execution after heartbeat state `state` (not "owned"); returns the reason it gave. */
export function stopAsLostOwner(exec: Execution, recorder: StepRecorder, id: string, state: string | null): string {
  if (state === "deadline") {
    // Past the run's deadline: nothing more is written, and the run is ended as deadline_exceeded.
    recorder.noteFenceRejected(id, "heartbeat", PAST_RUN_DEADLINE);
    exec.requestStop({ kind: "abandon", reason: PAST_RUN_DEADLINE });
    return PAST_RUN_DEADLINE;
  }
  const reason = state === "cancelled" ? "cancelled" : state === "expired" ? "lease expired" : "lease lost";
  recorder.noteFenceRejected(id, "heartbeat", reason);
  exec.requestStop({ kind: "lost", reason });
  return reason;
}
