// npm run bench: the figures of docs/performance.md, printed, never asserted by timing. Everything is
// measured in this one run; every ratio is computed from figures of this run.
// The pieces live in scripts/bench/ (one concept per file).
//
//   npm run bench                              every section (5, scale-out, takes ~10 minutes of it)
//   npm run bench -- --core                    the machine and sections 1–4 only
//   npm run bench -- --children                the machine and section 1's parent of 10 children only
//   npm run bench -- --scale                   the machine and section 5 only
//   npm run bench -- --scale --scale-runs 40   section 5 on a backlog of 40 runs (default 2,000)
//   npm run bench -- --tracing                 the machine and section 6 (tracing cost per step) only
//   npm run bench -- --retention               the machine and section 7 (retention, 1,000,000 runs) only
//   npm run bench -- --peers                   the machine and section 8 (graphile-worker, pg-boss, DBOS, cold
//                                              start) only; the first time, it installs the three into
//                                              scripts/bench/node_modules
//   npm run bench -- --peers --rtt 1           section 8 with every worker connecting through a proxy adding 1 ms
//                                              a round trip (no cold start); --peer-jobs N (default 2,000) and
//                                              --peer-rounds N (default 3) make it shorter
//   npm run bench -- --operations              the machine and section 9 (list filters, cancelMany) only
//   npm run bench -- --flow                    the machine and section 10 (rate-limited claims at 1,000,000) only
//   npm run bench -- --priority-walk           the machine and section 11 (an idle claim over 20,000 waiting
//                                              runs at distinct priorities, and at one) only
//   npm run bench -- --encryption              the machine and section 12 (encryption at rest per step) only
//   npm run bench -- --events                  the machine and section 13 (durable.publish, 1 and 10 subscribers) only
//   npm run bench -- --metrics                 the machine and section 14 (a metrics scrape at 1,000,000 runs) only
import { dropCreatedDatabases } from "./bench/databases";
import { loadAverage, machine } from "./bench/machine";
import { table } from "./bench/report";
import { tracingSection } from "./bench/tracing";
import { retentionSection } from "./bench/retention-section";
import { ensurePeerPackages } from "./bench/peer-packages";
import { operationsSection } from "./bench/operations";
import { priorityWalkRows } from "./bench/priority-walk";
import { flowControlSection } from "./bench/flow-control";
import { CLAIM_SAMPLES, FINISHED_RUNS, childrenSection, coreSections } from "./bench/core-sections";
import { heading } from "./bench/section-heading";
import { encryptionSection } from "./bench/encryption";
import { eventsSection } from "./bench/events";
import { metricsSection } from "./bench/metrics";
import { parseOptions } from "./bench/options";
import { scaleSection } from "./bench/scale-section";

const began = performance.now();
const options = parseOptions(process.argv.slice(2));

try {
  // ── Machine ────────────────────────────────────────────────────────────────────────────────
  const m = await machine();
  console.log("durable-next bench (docs/performance.md)\n");
  table([
    ["machine", ""],
    ["cores", `${m.cores} × ${m.cpu}`],
    ["node", m.node],
    [
      "PostgreSQL",
      `${m.postgres} (${Object.entries(m.settings)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")})`,
    ],
    ["PGlite", `${m.pglite} (in-memory)`],
    ["load average", `${m.load} (1, 5, 15 min)`],
  ]);
  if (Number(m.load.split(" ")[0]) > m.cores / 2) {
    console.log(
      `\n  note: the machine is busy (load ${m.load.split(" ")[0]} on ${m.cores} cores): ` +
        "absolute figures are noisy; ratios less so.",
    );
  }

  const all = options.only === null;
  if (all || options.only === "core") await coreSections();
  else if (options.only === "children") await childrenSection();

  // ── 5. Scale-out ───────────────────────────────────────────────────────────────────────────
  if (all || options.only === "scale") await scaleSection(options.scaleRuns);

  // ── 6. Tracing cost per step (scripts/bench/tracing.ts prints its table) ────────────────────
  if (all || options.only === "tracing") await tracingSection(heading, table);

  // ── 7. Retention against 1,000,000 finished runs (scripts/bench/retention.ts prints its tables) ──
  if (all || options.only === "retention") await retentionSection(heading, table);

  // ── 8. Peers: graphile-worker, pg-boss and DBOS on one workload, and cold start (scripts/bench/peers.ts) ──
  if (all || options.only === "peers") {
    // The peers' packages are installed on demand (scripts/bench/peer-packages.ts), so the section's
    // modules, which import them, load only after that.
    ensurePeerPackages();
    const { peersSection } = await import("./bench/peers-section");
    await peersSection(heading, table, { rounds: options.peerRounds, jobs: options.peerJobs, rttMs: options.rttMs });
  }

  // ── 9. Operations: list filters and cancelMany on 100,000 runs (scripts/bench/operations.ts) ──
  if (all || options.only === "operations") await operationsSection(heading, table);

  // ── 10. Flow control: a rate-limited claim at 1,000,000 finished runs (scripts/bench/flow-control.ts) ──
  if (all || options.only === "flow") await flowControlSection(heading, table, CLAIM_SAMPLES, FINISHED_RUNS, 10_000);

  // ── 11. The claim's priority walk when nothing is due (scripts/bench/priority-walk.ts) ──
  if (all || options.only === "priority-walk") {
    heading("11. An idle claim (nothing due) over waiting runs at distinct priorities and at one");
    table(await priorityWalkRows(CLAIM_SAMPLES));
  }

  // ── 12. Encryption at rest per step (scripts/bench/encryption.ts prints its table) ──
  if (all || options.only === "encryption") await encryptionSection(heading, table);

  // ── 13. durable.publish with 1 and 10 subscribers (scripts/bench/events.ts prints its table) ──
  if (all || options.only === "events") await eventsSection(heading, table);

  // ── 14. A metrics scrape at 1,000,000 finished runs (scripts/bench/metrics.ts prints its tables) ──
  if (all || options.only === "metrics") await metricsSection(heading, table);
} finally {
  await dropCreatedDatabases();
}
console.log(`\nbench took ${((performance.now() - began) / 1000).toFixed(0)} s; load average now ${loadAverage()}`);
