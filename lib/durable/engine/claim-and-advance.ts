// One claim and one pass over the claimed run: what a tick's loops, a worker's loops and
// `advance(id)` all do (docs/layout.md, "The path of a tick, file by file").
import type { ClaimedRun, ClaimRequest } from "../store";
import { claimDueRun, claimDueRuns } from "../store";
import { type AdvanceOutcome, advanceClaimedRun, type ClaimChain } from "./run/advance";
import { checkBudgetMs } from "./check-range";
import { versionKey } from "./define-workflow";
import { failpoint } from "./run/failpoints";
import { assertOpen, type DurableInstance } from "./instance";
import type { Advanced } from "./loops";
import { withInvocationSpan } from "./run/tracing";

export interface AdvanceRequest {
  /** Exactly this run, or none: what `advance(id)` claims. */
  runId?: string;
  /** Runs this tick gave back, not claimed again by it. */
  exclude?: readonly string[];
  /** Once aborted, the run is given back at its next step (a worker stopping). */
  release?: AbortSignal;
  /** Runs as soon as the claim succeeded. */
  onClaimed?: () => void;
  /** A run the previous run's completion already claimed for this loop: advanced without a claim of its own. */
  carried?: ClaimedRun | null;
  /** The loop claims again afterwards, so this run's completion may claim for it. */
  chain?: ClaimChain;
}

/** Claims a due run (or exactly `runId`) and advances it inside the budget; null when none was due. */
export async function claimAndAdvance(
  instance: DurableInstance,
  deadline: number,
  budget: number,
  request: AdvanceRequest = {},
): Promise<Advanced | null> {
  const remaining = deadline - instance.now();
  // The lease covers the invocation's deadline plus the margin (docs/rules.md, rule 11a).
  const claim =
    request.carried ??
    (await claimDueRun(instance.db, {
      workflows: instance.names,
      versions: instance.registry.versions,
      runId: request.runId,
      leaseMs: remaining + instance.settings.marginMs,
      exclude: request.exclude,
      limits: instance.limits,
      rates: instance.rates,
    }));
  if (!claim) return null;
  request.onClaimed?.();
  await failpoint("claim.after");
  // The run replays on the version it started with.
  const workflow = instance.registry.byVersion.get(versionKey(claim.run.workflow, claim.run.version))!;
  const outcome = await advanceClaimedRun(
    instance.settings,
    workflow,
    claim,
    deadline,
    budget,
    request.release,
    request.chain,
  );
  return { claim, outcome };
}

/** The claim a loop chains onto a completion (docs/decisions.md, "Chained claims"). */
export function chainedClaim(
  instance: DurableInstance,
  leaseMs: number,
  exclude: readonly string[] = [],
): ClaimRequest {
  return {
    workflows: instance.names,
    versions: instance.registry.versions,
    leaseMs,
    exclude,
    limits: instance.limits,
    rates: instance.rates,
  };
}

/**
 * Claims up to `count` due runs in one statement, each with this lease (docs/decisions.md, "Batched
 * claims"): a worker's idle loops, a tick's first claim for its loops. Only for loops that are free
 * to advance each run at once, so that no lease runs down while a run waits in memory.
 */
export function claimBatch(
  instance: DurableInstance,
  count: number,
  leaseMs: number,
  exclude: readonly string[] = [],
): Promise<ClaimedRun[]> {
  return claimDueRuns(instance.db, chainedClaim(instance, leaseMs, exclude), count);
}

/**
 * `advance(id)`: claims exactly that run, if due, and advances it inside the budget. With
 * `children`, a run that parks on child runs its suspension started (`invoke`) has them advanced
 * in this call too (as many at once as `tickConcurrency`), and then the run again once their
 * ends made it due: what the routes do after answering, so a parent started through them does
 * not wait for the next tick (docs/guide/composition.md, "Child runs").
 */
export async function advanceById(
  instance: DurableInstance,
  id: string,
  options: { budgetMs?: number; children?: boolean } = {},
): Promise<AdvanceOutcome | null> {
  assertOpen(instance);
  const budget = checkBudgetMs(options.budgetMs ?? instance.settings.budgetMs);
  const deadline = instance.now() + budget;
  if (budget < instance.settings.marginMs) return null;
  const advanced = await withInvocationSpan("advance", () =>
    advanceFamily(instance, id, deadline, budget, options.children === true),
  );
  return advanced?.outcome ?? null;
}

async function advanceFamily(
  instance: DurableInstance,
  id: string,
  deadline: number,
  budget: number,
  children: boolean,
): Promise<Advanced | null> {
  // One more claim only while a step with the default lease could still fit.
  const fits = () => deadline - instance.now() > instance.settings.leaseMs + instance.settings.marginMs;
  const chain: ClaimChain = { request: () => null };
  const advanced = await claimAndAdvance(instance, deadline, budget, { runId: id, chain });
  const started = chain.started ?? [];
  if (!advanced || !children || advanced.outcome !== "waiting" || started.length === 0 || !fits()) return advanced;
  for (let next = 0; next < started.length && fits(); next += instance.tickConcurrency) {
    const batch = started.slice(next, next + instance.tickConcurrency);
    await Promise.all(batch.map((child) => advanceFamily(instance, child, deadline, budget, true)));
  }
  // The children that ended made the run due: advance it again (null: it still waits). The
  // invocation's span shows the run's first claim, and the outcome it came to last.
  const again = fits() ? await advanceFamily(instance, id, deadline, budget, true) : null;
  return again ? { claim: advanced.claim, outcome: again.outcome } : advanced;
}
