// The failpoints a crash lands on in the chaos scenarios (docs/invariants.md): each step of a
// run's life where a SIGKILL must lose nothing. Scenario 1 kills a worker at each in turn; a worker
// with KILL_RATE draws from them unless KILL_POINTS names others (worker.ts).
import type { FailpointName } from "../../lib/durable/engine/run/failpoints";

export const CRASH_POINTS: readonly FailpointName[] = [
  "claim.after",
  "run.before-body",
  "run.after-body",
  "run.after-receipt",
  "tx.after-effect",
  "tx.after-receipt",
  "tx.after-commit",
  "finish.before",
  "finish.after",
];
