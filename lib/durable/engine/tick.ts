// `tick()`: what one cron call does (docs/layout.md, "The path of a tick, file by file"): start
// due schedule slots, fail runs of unknown versions when asked to, release runs held under a changed
// rate limit (at an instance's first tick, then once a minute), run up to `concurrency` claim
// loops until nothing is due or the budget cannot fit another step, then a bounded retention slice.
import { DecryptionError } from "../errors";
import type { TickReport } from "../schemas";
import { type ClaimedRun, failUnknownVersions, readNextWake } from "../store";
import type { ClaimChain } from "./run/advance";
import { chainedClaim, claimAndAdvance, claimBatch } from "./claim-and-advance";
import { checkBudgetMs, checkRange } from "./check-range";
import { assertOpen, type DurableInstance } from "./instance";
import { countAdvanced, emptyTickReport, runLoops } from "./loops";
import { releaseChangedRateHolds } from "./rate-holds";
import { withInvocationSpan } from "./run/tracing";

/** One tick, traced as one invocation span. */
export function tickOnce(
  instance: DurableInstance,
  options: { budgetMs?: number; concurrency?: number } = {},
): Promise<TickReport> {
  return withInvocationSpan("tick", () => tickUntraced(instance, options));
}

async function tickUntraced(
  instance: DurableInstance,
  options: { budgetMs?: number; concurrency?: number },
): Promise<TickReport> {
  assertOpen(instance);
  const budget = checkBudgetMs(options.budgetMs ?? instance.settings.budgetMs);
  const concurrency = checkRange("concurrency", options.concurrency ?? instance.tickConcurrency, 1, 64, "whole number");
  const deadline = instance.now() + budget;
  const report: TickReport = emptyTickReport();
  try {
    report.scheduled = (await instance.scheduler.startDue()).length;
  } catch (error) {
    // A schedule that cannot start must not stop the runs already due from advancing.
    warn(instance, report, `starting due schedule slots failed: ${(error as Error)?.message ?? error}`);
  }
  warnOfSmallBudget(instance, report, budget);
  if (instance.unknownVersion === "fail") {
    report.failed += (await failUnknownVersions(instance.db, instance.registry.versions, 100)).length;
  }
  await releaseChangedRateHolds(instance);
  await runClaimLoops(instance, report, deadline, budget, concurrency);
  // What is left of the budget goes to retention, in a bounded slice (docs/guide/retention.md, "Retention").
  try {
    const compacted = await instance.compactor.slice();
    if (compacted) report.compacted = compacted.runsCompacted + compacted.runsDeleted + compacted.eventsDeleted;
  } catch (error) {
    warn(instance, report, `retention failed: ${(error as Error)?.message ?? error}`);
  }
  await reportNextWake(instance, report);
  report.budgetLeftMs = Math.max(0, Math.round(deadline - instance.now()));
  return report;
}

/**
 * A budget that cannot fit the default lease plus the margin claims nothing: say so, once in the
 * log and in every such report, rather than tick silently (docs/rules.md, rule 11).
 */
function warnOfSmallBudget(instance: DurableInstance, report: TickReport, budget: number): void {
  const { leaseMs, marginMs } = instance.settings;
  if (budget >= leaseMs + marginMs) return;
  const warning =
    `a tick budget of ${Math.round(budget)} ms claims nothing: it must fit the default lease ` +
    `(${leaseMs} ms) plus the margin (${marginMs} ms); raise maxDuration or lower defaults.lease`;
  report.warnings.push(warning);
  if (!instance.state.warnedSmallBudget) instance.log(warning);
  instance.state.warnedSmallBudget = true;
}

/** `concurrency` loops, each claiming and advancing due runs while the budget fits a step. */
async function runClaimLoops(
  instance: DurableInstance,
  report: TickReport,
  deadline: number,
  budget: number,
  concurrency: number,
): Promise<void> {
  const { leaseMs, marginMs } = instance.settings;
  // Runs given back by this tick are not claimed again by it, by any of its loops.
  const yielded: string[] = [];
  // Stop claiming once what is left cannot fit the default lease plus the margin (rule 11).
  const fits = () => deadline - instance.now() >= leaseMs + marginMs;
  // With more than one loop, the first claim is one batch for all of them (docs/decisions.md,
  // "Batched claims"); a loop it found nothing for ends, as after an empty claim.
  const first =
    concurrency > 1 && fits() ? await claimBatch(instance, concurrency, deadline - instance.now() + marginMs) : null;
  await runLoops(concurrency, async (index) => {
    let carried: ClaimedRun | null = first?.[index] ?? null;
    if (first && !carried) return;
    // A run the last completion claimed is advanced whatever is left: it holds its lease.
    while (carried || fits()) {
      const chain: ClaimChain = {
        request: () => (fits() ? chainedClaim(instance, deadline - instance.now() + marginMs, yielded) : null),
      };
      let advanced: Awaited<ReturnType<typeof claimAndAdvance>>;
      try {
        advanced = await claimAndAdvance(instance, deadline, budget, { exclude: yielded, carried, chain });
      } catch (error) {
        // A run whose payloads no key opens was given back untouched (engine/run/advance.ts): the
        // tick goes on with the others and says so.
        if (!DecryptionError.is(error)) throw error;
        report.warnings.push(`run "${error.runId ?? "?"}" was not advanced: ${error.message}`);
        carried = null;
        continue;
      }
      if (!advanced) return;
      countAdvanced(report, advanced);
      if (advanced.outcome === "yielded") yielded.push(advanced.claim.run.id);
      if (chain.claimed === null) return; // the completion's claim found nothing due
      carried = chain.claimed ?? null;
    }
  });
}

/**
 * When the next run wakes, read as the tick ends: what a caller that schedules its own calls (the
 * local cron of `next dev`) waits for (docs/guide/http-routes.md, "The tick report"). A failed read
 * leaves it null with a warning; the tick's work is done by then.
 */
async function reportNextWake(instance: DurableInstance, report: TickReport): Promise<void> {
  try {
    const wake = await readNextWake(instance.db, instance.names);
    report.nextWakeAt = wake ? wake.at.toISOString() : null;
    report.nextWakeInMs = wake ? Math.round(wake.inMs) : null;
  } catch (error) {
    warn(instance, report, `reading the next wake time failed: ${(error as Error)?.message ?? error}`);
  }
}

/** A warning the tick goes on after: in the report and in the log. */
function warn(instance: DurableInstance, report: TickReport, warning: string): void {
  report.warnings.push(warning);
  instance.log(warning);
}
