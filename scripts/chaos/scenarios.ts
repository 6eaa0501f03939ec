// the chaos scenarios of docs/invariants.md on the real server. Each builds a fresh database, starts runs, lets
// workers (child processes) and a seeded nemesis loose, drains what is left, and returns its
// counts; the caller checks I1–I10 on the database it leaves (and the invariants a scenario adds).
// The scenarios live in crash-, connection-, load- and composition-scenarios.ts, batch-kills.ts and
// encryption-scenario.ts.
import { killHoldingBatches } from "./batch-kills";
import type { Scale, ScenarioResult } from "./scenario-support";
import { blackholedConnections, skewedClocks, terminateBackends } from "./connection-scenarios";
import { budgets, fanOut, load } from "./load-scenarios";
import { crashAtEveryFailpoint, frozenInTransaction, killAndPause } from "./crash-scenarios";
import { parentsAndChildren } from "./composition-scenarios";
import { encryptedKillAndPause } from "./encryption-scenario";
import { eventsInAndOut } from "./events-scenario";

export type { Scale, ScenarioResult };

/** By docs/invariants.md scenario number (2 and 3 are failpoints of 1). */
export const SCENARIOS: ReadonlyArray<[string, (scale: Scale) => Promise<ScenarioResult>]> = [
  ["1-3", crashAtEveryFailpoint],
  ["4", killAndPause],
  ["5", frozenInTransaction],
  ["6", terminateBackends],
  ["6b", blackholedConnections],
  ["7", skewedClocks],
  ["8", budgets],
  ["9", load],
  ["10", fanOut],
  ["11", parentsAndChildren],
  ["12", killHoldingBatches],
  ["13", encryptedKillAndPause],
  ["14", eventsInAndOut],
];
