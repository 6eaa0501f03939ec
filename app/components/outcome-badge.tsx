import type { Outcome } from "./outcome";

/**
 * A completed run's outcome (./outcome.ts) as a pill beside its status badge; `data-outcome` holds
 * the tone so tests can find it. The output's reason, when it has one, is the pill's tooltip.
 */
export function OutcomeBadge({ outcome, large = false }: { outcome: Outcome; large?: boolean }) {
  return (
    <span
      className={`run-outcome run-outcome-${outcome.tone}${large ? " run-outcome-large" : ""}`}
      data-testid="outcome"
      data-outcome={outcome.tone}
      title={outcome.detail ?? undefined}
    >
      {outcome.label}
    </span>
  );
}
