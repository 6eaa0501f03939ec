import type { Execution } from "../engine/run/execution";
import { never } from "../engine/run/execution";
import type { StepRecorder } from "../engine/run/step-recorder";

/**
 * `value`: journals a nondeterministic value (a uuid, the time, a random number) once. Its receipt
 * is held back when nothing else is in flight and rides on the next write (docs/decisions.md,
 * "Held-back receipts").
 */
export function createValueStep(exec: Execution, recorder: StepRecorder) {
  return async function value(id: string, fn: () => unknown): Promise<any> {
    const { seq, recorded, isReclaim } = exec.reach(id, "value");
    const known = recorder.answer(recorded);
    if (known.done) return known.value;
    if (exec.isStopping) return never();
    // Executed (not answered from its receipt): a `durable.step` span (engine/run/tracing.ts).
    return recorder.traced(
      { stepId: id, kind: "value", attempt: 1, isReclaim },
      async () => {
        const text = recorder.json(await fn(), id);
        const outcome = { stepId: id, seq, kind: "value", status: "completed", attempt: 1, resultJson: text } as const;
        if (recorder.holdBack(outcome, exec.inFlight > 0)) return JSON.parse(text);
        const written = await exec.track(() => recorder.write(outcome));
        if (!written) return never();
        return written.conflict ? (written.recorded.result as any) : JSON.parse(text);
      },
      () => ({ outcome: "completed" }),
    );
  };
}
