// `work()`: worker mode's wiring to the instance. The loops, the LISTEN/NOTIFY wake-ups and the
// stop live in worker.ts; this gives them the instance's claims and a tick's housekeeping.
import { failUnknownVersions } from "../store";
import { chainedClaim, claimAndAdvance, claimBatch } from "./claim-and-advance";
import { assertOpen, type DurableInstance } from "./instance";
import { releaseChangedRateHolds } from "./rate-holds";
import { runWorker, type WorkOptions, type WorkReport } from "./worker";

/** Runs a worker until `options.signal` aborts or the instance closes, whichever comes first. */
export async function workUntilStopped(instance: DurableInstance, options: WorkOptions = {}): Promise<WorkReport> {
  assertOpen(instance);
  const { db, settings, registry } = instance;
  const stops = options.signal ? [options.signal, instance.closing.signal] : [instance.closing.signal];
  return runWorker(
    {
      db,
      workflows: instance.names,
      budgetMs: settings.budgetMs,
      marginMs: settings.marginMs,
      log: instance.log,
      claimAndAdvance: (deadline, budget, release, onClaimed, carried, chain) =>
        claimAndAdvance(instance, deadline, budget, { release, onClaimed, carried, chain }),
      nextClaim: (leaseMs) => chainedClaim(instance, leaseMs),
      claimRuns: (count, leaseMs) => claimBatch(instance, count, leaseMs),
      housekeeping: async () => {
        const started = await instance.scheduler.startDue();
        if (instance.unknownVersion === "fail") await failUnknownVersions(db, registry.versions, 100);
        await releaseChangedRateHolds(instance);
        await instance.compactor.slice();
        return started.length;
      },
    },
    { ...options, signal: AbortSignal.any(stops) },
  );
}
