"use client";
import { useActionState } from "react";
import { forkFromStep } from "../operations-actions";
import { SubmitButton } from "./submit-button";

/**
 * "Fork from here" on a step of the timeline (docs/guide/dashboard.md, "Operating many runs"): a
 * new run with this run's receipts before the step, whose page opens once it is made. A refusal
 * shows under the button. A plain form before hydration.
 */
export function ForkButton({ runId, stepId }: { runId: string; stepId: string }) {
  const [result, action] = useActionState(forkFromStep, null);
  return (
    <form action={action} className="fork-form" data-testid="fork-form">
      <input type="hidden" name="runId" value={runId} />
      <input type="hidden" name="stepId" value={stepId} />
      <SubmitButton className="button button-small" pendingLabel="Forking…" label={`Fork from step ${stepId}`}>
        Fork from here
      </SubmitButton>
      {result && !result.ok ? (
        <p className="action-message action-error" role="status" data-testid="fork-refused">
          {result.message}
        </p>
      ) : null}
    </form>
  );
}
