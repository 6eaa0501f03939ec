// Runs a rate limit held, released when the limit changed (docs/guide/flow-control.md, "Rate
// limits"; docs/sql.md, "Flow control"): a held run waits at a slot computed for the limit of the
// deployment that held it, so a deploy that raises or removes the limit makes those runs due
// again, and the next claims admit them, or hold them again, under the limit registered now.
import { releaseRateHolds } from "../store";
import type { DurableInstance } from "./instance";

/** How often an instance looks for runs held under another limit: at its first tick, then this often. */
export const RATE_HOLDS_SWEEP_MS = 60_000;
/** The most runs one sweep releases; a full sweep looks again at the next tick. */
const RELEASE_CAP = 1_000;

/**
 * Releases the runs held under a limit other than this instance's, at its first tick or worker
 * housekeeping and then once a minute: a deploy is when a limit changes, and an instance of the
 * previous release may still hold runs for a while during it. An index probe per workflow when
 * there is nothing to release. Answers how many it released.
 */
export async function releaseChangedRateHolds(instance: DurableInstance): Promise<number> {
  const { state } = instance;
  const now = instance.now();
  if (state.rateHoldsSweptAt !== null && now - state.rateHoldsSweptAt < RATE_HOLDS_SWEEP_MS) return 0;
  const released = await releaseRateHolds(instance.db, instance.names, instance.rates, RELEASE_CAP);
  // A sweep that hit its cap looks again at the next call.
  state.rateHoldsSweptAt = released < RELEASE_CAP ? now : null;
  return released;
}
