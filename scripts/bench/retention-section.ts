// Section 7 of npm run bench (scripts/bench.ts): the figures of scripts/bench/retention.ts, printed.
import { BLOCK, type ClaimFigures, type RetentionBenchReport, retentionBench } from "./retention";
import { ms, ratio } from "./report";

type Heading = (text: string) => void;
type Table = (rows: string[][]) => void;

export const RETENTION_FINISHED = 1_000_000;
const TICKS = 200;
const CLAIM_SAMPLES = 500;

/** Section 7 of `npm run bench` (alone: `--retention`): prints its tables with the bench's helpers. */
export async function retentionSection(heading: Heading, table: Table, finished = RETENTION_FINISHED): Promise<void> {
  const r = await retentionBench(finished, TICKS, CLAIM_SAMPLES);
  printTicks(r, finished, heading, table);
  printClaims(r, finished, heading, table);
  printPlan(r);
}

/** The ticks with retention off, idle, deleting and compacting, and what they deleted. */
function printTicks(r: RetentionBenchReport, finished: number, heading: Heading, table: Table): void {
  const n = finished.toLocaleString("en-US");
  heading(
    `7. Retention: ${n} finished runs (2 step rows and an event each, a signal and a stream chunk for one in ten; ` +
      `made in ${r.fillSeconds.toFixed(0)} s),\n   ${TICKS} ticks per row with no run due, timed at the caller ` +
      "(tick(): its claim finding nothing, then the retention slice: at most 500 rows of each kind, 100 per " +
      "statement, 250 ms)",
  );
  const off = r.ticks[0]!;
  const perTick = (v: number | undefined) => (v === undefined ? "-" : v.toFixed(0));
  table([
    [
      "tick",
      "p50",
      "p99",
      "mean",
      "added (mean)",
      "report.compacted",
      "runs deleted",
      "step rows deleted",
      "events deleted",
    ],
    ...r.ticks.map((t) => [
      t.label,
      ms(t.p50),
      ms(t.p99),
      ms(t.mean),
      t === off ? "-" : ms(t.mean - off.mean),
      perTick(t.compacted),
      perTick(t.rowsPerTick?.runs),
      perTick(t.rowsPerTick?.steps),
      perTick(t.rowsPerTick?.events),
    ]),
  ]);
  console.log(
    `
  rows deleted per tick: durable_runs, durable_steps and durable_events counted before and after the row's ticks, over
  the number of ticks (signals and chunks go too, uncounted). Retention on with nothing due costs one statement (the
  probe); with work, the probe and one statement per batch (100 rows of each kind, halved after a statement that took
  over half the slice's 250 ms). "deleting" ran first, on the oldest runs (with their steps); "compacting" then took
  the oldest left; the claims below were sampled next, then the row "without the index" ran, after the bench dropped
  durable_signals_run (0005) in its throwaway database: without it the foreign key's cascade reads all of
  durable_signals for every run deleted (its primary key is seq; the mailbox index holds untaken deliveries only).`,
  );
}

/** The claim's latency while retention works, against retention off, idle and an empty table. */
function printClaims(r: RetentionBenchReport, finished: number, heading: Heading, table: Table): void {
  const n = finished.toLocaleString("en-US");
  heading(
    `   Claim latency with ${n} finished runs while retention works (${CLAIM_SAMPLES} samples each, taken in ` +
      `alternating blocks of ${BLOCK}; each sample:\n   start a due run, time durable_claim_run at the client, ` +
      "finish the run, as the claim-latency section does)",
  );
  const [empty, offClaim, paused, sequential] = r.claims as [ClaimFigures, ClaimFigures, ClaimFigures, ClaimFigures];
  table([
    ["claims", "p50", "p99", "vs off (p50)", "vs off (p99)", "vs idle (p50)", "vs empty (p50)"],
    ...r.claims.map((c) => [
      c.label,
      ms(c.p50),
      ms(c.p99),
      ratio(c.p50 / offClaim.p50),
      ratio(c.p99 / offClaim.p99),
      ratio(c.p50 / paused.p50),
      ratio(c.p50 / empty.p50),
    ]),
  ]);
  const within = sequential.p50 / paused.p50;
  console.log(
    `
  a slice after each claim: what a tick with retention does (its claims, then the slice). Against the same claims with
  retention off and the same idle time between them, its median is ${ratio(within)}: ` +
      `${within <= 1.2 ? "within" : "OUTSIDE"} the 1.2× target (against claims back to back: ` +
      `${ratio(sequential.p50 / offClaim.p50)}; the idle row shows what the pause alone costs).
  another instance compacting meanwhile: ${r.concurrentSlices.slices} slices back to back on another connection ` +
      `(${r.concurrentSlices.compacted.toLocaleString("en-US")} rows of the report), competing for this machine's ` +
      "cores with the claims; no lock is shared (the claim's rows are not terminal).",
  );
}

/** The scans of one compaction statement, and whether each pick used its index. */
function printPlan(r: RetentionBenchReport): void {
  const uses = (index: string) => r.plan.some((line) => line.includes(`using ${index} on`));
  const seq = r.plan.filter((line) => /Seq Scan/.test(line)).map((line) => line.trim());
  console.log(
    "\n  EXPLAIN ANALYZE of one compaction statement (steps 7d, runs 25d, events 7d, 100 of each; rolled back), " +
      "its scans:\n",
  );
  for (const line of r.plan.filter((l) => /Scan using|Seq Scan|Trigger|Execution|Planning/.test(l))) {
    console.log(`    ${line.trim()}`);
  }
  console.log(
    `\n  compaction pick through durable_runs_to_compact: ${uses("durable_runs_to_compact") ? "yes" : "NO"}; ` +
      `deletion pick through durable_runs_finished: ${uses("durable_runs_finished") ? "yes" : "NO"}; ` +
      `events through durable_events_created: ${uses("durable_events_created") ? "yes" : "NO"}; ` +
      `sequential scans: ${seq.length ? seq.join(", ") : "none"}.`,
  );
}
