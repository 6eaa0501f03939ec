import type { TickReport } from "../schemas";
import type { ClaimedRun } from "../store";
import type { AdvanceOutcome } from "./run/advance";

/** What one claim-and-advance did: the claim and how the invocation left the run. */
export interface Advanced {
  claim: ClaimedRun;
  outcome: AdvanceOutcome;
}

/**
 * Runs `count` copies of `loop` at once and waits for every one of them, so no loop is still
 * working when the caller answers; then rethrows the first failure, if any.
 */
export async function runLoops(count: number, loop: (index: number) => Promise<void>): Promise<void> {
  const settled = await Promise.allSettled(Array.from({ length: count }, (_, index) => loop(index)));
  const failed = settled.find((result) => result.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

export function emptyTickReport(): TickReport {
  return {
    claimed: 0,
    completed: 0,
    waiting: 0,
    failed: 0,
    yielded: 0,
    healed: 0,
    scheduled: 0,
    fannedOut: 0,
    compacted: 0,
    budgetLeftMs: 0,
    nextWakeAt: null,
    nextWakeInMs: null,
    warnings: [],
  };
}

type Counts = Pick<TickReport, "claimed" | "completed" | "waiting" | "failed" | "yielded" | "healed">;

/** Counts one advanced run into a tick's (or a worker's) report. */
export function countAdvanced(report: Counts, { claim, outcome }: Advanced): void {
  report.claimed++;
  if (claim.healed) report.healed++;
  if (outcome === "completed") report.completed++;
  else if (outcome === "failed") report.failed++;
  else if (outcome === "waiting") report.waiting++;
  else if (outcome === "yielded") report.yielded++;
}
