import type { StepHost } from "../engine/run/step-host";
import { resultJson } from "./effect-body";
import { never } from "./never";

/**
 * `value`: journals a nondeterministic value (a uuid, the time, a random number) once. Its receipt
 * is held back when nothing else is in flight and rides on the next write (docs/decisions.md,
 * "Held-back receipts").
 */
export function createValueStep(host: StepHost) {
  return async function value(id: string, fn: () => unknown): Promise<any> {
    const { seq, recorded, isReclaim } = host.reach(id, "value");
    const known = host.answer(recorded);
    if (known) return known;
    if (host.stopping) return never();
    // Executed (not answered from its receipt): a `durable.step` span (engine/run/tracing.ts).
    return host.trace(
      { stepId: id, kind: "value", attempt: 1, isReclaim },
      async () => {
        const text = resultJson(host, await fn(), id);
        const outcome = { stepId: id, seq, kind: "value", status: "completed", attempt: 1, resultJson: text } as const;
        const kept = host.holdBack(outcome, false);
        const written = kept === true ? kept : await kept;
        if (!written) return never();
        if (written === true) return JSON.parse(text);
        return written.conflict ? (written.recorded.result as any) : JSON.parse(text);
      },
      () => ({ outcome: "completed" }),
    );
  };
}
