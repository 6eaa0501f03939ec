// Section 8 of `npm run bench` (docs/performance.md, "Peers"): runs the peers' measurements
// (scripts/bench/peers.ts), through the delaying proxy with --rtt, and prints them: a table of the
// drains per loop count with CPU and round trips per run, the verdicts against each peer at its
// best, where our time goes, the idle latency and (without --rtt) the cold start.
import { coldStart, printColdStart } from "./cold-start";
import { SERVER_URL } from "./databases";
import { type DelayProxy, startDelayProxy } from "./delay-proxy";
import { type PeerConfiguration, type PeerName, STEPS_PER_JOB } from "./peer-contender";
import { DBOS_POLL_MS } from "./peer-dbos";
import { GRAPHILE_LOCAL_QUEUE } from "./peer-graphile";
import { PG_BOSS_BATCH, PG_BOSS_POLL_SECONDS } from "./peer-pg-boss";
import {
  COLD_START_SAMPLES,
  CONFIGURATIONS,
  type DrainFigures,
  PEER_LATENCY_SAMPLES,
  PEER_LOOPS,
  type PeerFigures,
  peers,
} from "./peers";
import { ms, percentile, ratio } from "./report";

export interface PeersSectionOptions {
  rounds: number;
  jobs: number;
  /** Added round trip time through the delaying proxy (ms), or null: direct. */
  rttMs: number | null;
}

type Heading = (text: string) => void;
type Table = (rows: string[][]) => void;

export const median = (values: number[]) => percentile(values, 50);

const SYSTEM_LABELS: Record<PeerName, string> = {
  durable: "durable-next",
  "graphile-worker": "graphile-worker",
  "pg-boss": "pg-boss",
  dbos: "DBOS",
};
const label = (config: PeerConfiguration) => `${SYSTEM_LABELS[config.system]}, ${config.mode}`;
const ours = CONFIGURATIONS.filter((c) => c.system === "durable");
const PEER_SYSTEMS = ["graphile-worker", "pg-boss", "dbos"] as const;

/** Section 8: runs it, then prints the drains, the verdicts, our statements, the latencies and the cold start. */
export async function peersSection(heading: Heading, table: Table, options: PeersSectionOptions): Promise<void> {
  const proxy = options.rttMs === null ? null : await startDelayProxy(options.rttMs, SERVER_URL);
  try {
    const f = await peers({
      rounds: options.rounds,
      jobs: options.jobs,
      proxy,
      progress: (line) => console.error(`  peers: ${line}`),
    });
    heading(
      `8. Peers: ${options.jobs.toLocaleString("en-US")} jobs of 3 receipt inserts (each its own transaction) ` +
        `enqueued, then drained by 1 and by ${PEER_LOOPS[1]} loops;\n   ${options.rounds} round(s), each draining ` +
        "every configuration in turn (the order of the systems rotates), each drain on a fresh database" +
        (proxy ? `;\n   every worker connects through the delaying proxy (--rtt ${proxy.rttMs})` : ""),
    );
    if (proxy) printProxy(proxy);
    printDrains(f, options.jobs, proxy !== null, table);
    printStatements(f, options.jobs, heading, table);
    printLatency(f, options.rounds, heading, table);
  } finally {
    await proxy?.close();
  }
  if (options.rttMs !== null) return; // the cold start opens its own connections, direct
  heading(
    `   Cold start: import, connect, one run and exit of the bundled code, spawn to exit; ${COLD_START_SAMPLES} ` +
      "samples each, interleaved (scripts/bench/cold-start.ts)",
  );
  printColdStart(await coldStart(COLD_START_SAMPLES));
}

function printProxy(proxy: DelayProxy): void {
  console.log(
    `\n  The proxy (scripts/bench/delay-proxy.ts, a process of its own) holds each chunk for half of ` +
      `${ms(proxy.heldMs)} in each direction,\n  calibrated so that a round trip of \`select 1\` through it ` +
      `costs ${ms(proxy.addedMs)} more than direct (medians of 300; asked for: ${ms(proxy.rttMs)}).\n` +
      "  It counts a round trip each time a client sends after it was delivered something since its previous " +
      "send.\n  Enqueueing, counting and the CPU readings go direct.",
  );
}

const perRun = (value: number, jobs: number) => value / jobs;
const cpuMs = (v: number) => `${v.toFixed(2)} ms`;

/** Our mode's runs/s over `rates`, per round, and the median of those ratios. */
function ratios(ourRates: number[], rates: number[]): { each: number[]; median: number } {
  const each = rates.map((r, i) => ourRates[i]! / r);
  return { each, median: median(each) };
}

/** One table per loop count, then the verdicts against each peer at its best. */
function printDrains(f: PeerFigures, jobs: number, withRoundTrips: boolean, table: Table): void {
  const rate = (v: number) => `${Math.round(v)}/s`;
  const verdicts: string[] = [];
  for (const loops of PEER_LOOPS) {
    const drainsOf = (key: string) => f.drains[key]![loops]!;
    const rounds = drainsOf(CONFIGURATIONS[0]!.key).length;
    const rows: string[][] = [
      [
        `${loops} loop(s)`,
        ...Array.from({ length: rounds }, (_, i) => `round ${i + 1}`),
        "median",
        "node CPU/run",
        "server CPU/run",
        "server CPU/step",
        "CPU/run",
        ...(withRoundTrips ? ["round trips/run"] : []),
        ...ours.map((c) => `${c.mode} ÷ this (per round)`),
      ],
    ];
    for (const config of CONFIGURATIONS) {
      const drains = drainsOf(config.key);
      const rates = drains.map((d) => d.runsPerSecond);
      rows.push([
        label(config),
        ...rates.map(rate),
        rate(median(rates)),
        ...cpuColumns(drains, jobs),
        ...(withRoundTrips ? [median(drains.map((d) => perRun(d.roundTrips!, jobs))).toFixed(2)] : []),
        ...ours.map((our) => {
          if (config.system === "durable") return "";
          const r = ratios(
            drainsOf(our.key).map((d) => d.runsPerSecond),
            rates,
          );
          return `${ratio(r.median)} (${r.each.map((x) => x.toFixed(2)).join(" ")})`;
        }),
      ]);
    }
    console.log("");
    table(rows);
    verdicts.push(...verdictsAt(f, loops));
  }
  printDrainNotes(verdicts);
}

/** Node, server (per run and per step) and total CPU ms per run: the medians over the rounds. */
function cpuColumns(drains: DrainFigures[], jobs: number): string[] {
  const node = median(drains.map((d) => perRun(d.cpu.node, jobs)));
  if (drains.some((d) => d.cpu.server === null)) return [cpuMs(node), "-", "-", "-"];
  const server = median(drains.map((d) => perRun(d.cpu.server!, jobs)));
  const total = median(drains.map((d) => perRun(d.cpu.node + d.cpu.server!, jobs)));
  return [cpuMs(node), cpuMs(server), cpuMs(server / STEPS_PER_JOB), cpuMs(total)];
}

/** Each of our modes against each peer at its best: per round, the best of its configurations. */
function verdictsAt(f: PeerFigures, loops: number): string[] {
  const lines: string[] = [];
  const rates = (key: string) => f.drains[key]![loops]!.map((d) => d.runsPerSecond);
  for (const our of ours) {
    for (const system of PEER_SYSTEMS) {
      const configs = CONFIGURATIONS.filter((c) => c.system === system);
      const best = rates(configs[0]!.key).map((_, i) => Math.max(...configs.map((c) => rates(c.key)[i]!)));
      const r = ratios(rates(our.key), best);
      const worst = Math.min(...r.each);
      lines.push(
        `${loops} loop(s), ours (${our.mode}) vs ${system} at its best: ${worst >= 1 ? "at or above" : "BELOW"} ` +
          `(lowest ${ratio(worst)}, median ${ratio(r.median)})`,
      );
    }
  }
  return lines;
}

function printDrainNotes(verdicts: string[]): void {
  console.log(
    `
  A job: for the peers, a handler inserting 3 rows into bench_receipts (primary key (job, step), on conflict do
  nothing), each its own statement and commit; for us, a run of 3 \`run\` steps, whose receipts the engine writes.
  The configurations (each system has a pool of loops + 2 connections for its workers):
    ${CONFIGURATIONS.map((c) => `${label(c)}: ${c.description}`).join("\n    ")}
  graphile-worker's tuned: its docs' batching options (local queue ${GRAPHILE_LOCAL_QUEUE}: above their suggested
  concurrency + 1 at both loop counts); pg-boss's tuned: ${PG_BOSS_BATCH} jobs a fetch, written one after another
  by the handler, the next fetch at once while batches come back full; its default polls every
  ${PG_BOSS_POLL_SECONDS} s. DBOS: its queue, polled every ${DBOS_POLL_MS} ms (its default, 1 s, would hold a worker to
  workerConcurrency workflows a second); its steps' checkpoints go to its system tables in the same database.
  The drain is timed from the workers' start (their pools connect inside it) until every job's last receipt is in
  and every completion has committed; receipts are counted after.
  CPU/run: this process (process.cpuUsage; all loops share its one JS thread) and the database's server backends
  (/proc/<pid>/stat of its sessions, those opened during the drain included), over the drain, per job, and per
  step (÷ ${STEPS_PER_JOB}: a job's receipts, each its own transaction; what a metered server bills); medians of the
  rounds. Ratios: our runs/s over that configuration's, the median of the rounds' ratios, then each round's.
  Target: ours at or above each peer at its best (per round, the best of its configurations), at 1 and
  at ${PEER_LOOPS[1]} loops, in every round:
    ${verdicts.join("\n    ")}`,
  );
}

/** Where our time goes with 1 loop: at the driver (send to next send), and at the server if it can say. */
function printStatements(f: PeerFigures, jobs: number, heading: Heading, table: Table): void {
  heading(
    "   Where our time goes with 1 loop (worker mode, last round): each statement from its send to the next send,\n" +
      "   so it includes the round trip, the server's work and commit, and the JavaScript after each result",
  );
  let total = 0;
  const statementRows = [...f.statements]
    .filter(([, { count }]) => count >= jobs / 2) // what runs send (not the worker's idle reads)
    .map(([kind, { count, ms: spent }]) => {
      total += spent / jobs;
      return [kind, (count / jobs).toFixed(2), ms(spent / count), ms(spent / jobs)];
    });
  table([["statement", "per run", "each", "per run"], ...statementRows, ["total", "", "", ms(total)]]);
  if (typeof f.serverStatements === "string") {
    console.log(`\n  (server time per statement not measured: ${f.serverStatements})`);
    return;
  }
  const measured = ours.filter((c) => (f.serverStatements as Record<string, unknown>)[c.key]);
  heading(
    "   Server time per statement in our 1-loop drains (last round; pg_stat_statements total_exec_time, top-level " +
      "statements:\n   a function's body counts in its caller, an implicit transaction's commit in none)",
  );
  const byMode = measured.map(
    (c) => (f.serverStatements as Record<string, Map<string, { calls: number; ms: number }>>)[c.key]!,
  );
  const kinds = [...new Set(byMode.flatMap((m) => [...m.keys()]))].filter((kind) =>
    byMode.some((m) => (m.get(kind)?.calls ?? 0) >= jobs / 20),
  );
  const cell = (m: Map<string, { calls: number; ms: number }>, kind: string) => {
    const entry = m.get(kind);
    return entry ? [(entry.calls / jobs).toFixed(2), (entry.ms / jobs).toFixed(3)] : ["-", "-"];
  };
  const sum = (m: Map<string, { calls: number; ms: number }>) => [
    "",
    (kinds.reduce((a, k) => a + (m.get(k)?.ms ?? 0), 0) / jobs).toFixed(3),
  ];
  table([
    ["statement", ...measured.flatMap((c) => [`${c.mode}: calls/run`, "server ms/run"])],
    ...kinds.map((kind) => [kind, ...byMode.flatMap((m) => cell(m, kind))]),
    ["total", ...byMode.flatMap(sum)],
  ]);
}

/** Enqueue to completion of one job on an idle system, per configuration that waits for jobs. */
function printLatency(f: PeerFigures, rounds: number, heading: Heading, table: Table): void {
  heading(
    `   Enqueue to completion of one job, idle system (one loop; completion seen through LISTEN on a trigger that ` +
      `fires as the\n   completion commits); ${PEER_LATENCY_SAMPLES} samples per round, ${rounds} round(s)`,
  );
  const lat = (name: string, samples: number[]) => [
    name,
    ms(percentile(samples, 50)),
    ms(percentile(samples, 99)),
    ms(samples.reduce((a, b) => a + b, 0) / samples.length),
  ];
  const how: Record<string, string> = {
    "durable-worker": "start, the worker wakes on NOTIFY",
    "graphile-default": "addJob, the worker wakes on NOTIFY",
    "graphile-tuned": "addJob, the local queue wakes on NOTIFY",
    "pg-boss-default": `send, the worker polls every ${PG_BOSS_POLL_SECONDS} s`,
    "pg-boss-tuned": "send, the worker wakes on NOTIFY (useListenNotify)",
    "dbos-queue": `startWorkflow on the queue, polled every ${DBOS_POLL_MS} ms`,
  };
  const waiting = CONFIGURATIONS.filter((c) => c.latency);
  table([
    ["system", "p50", "p99", "mean"],
    ...waiting.map((c) => lat(`${label(c)}: ${how[c.key] ?? ""}`, f.latency[c.key]!)),
    lat("durable-next: start, then advance(id) in process", f.advanceLatency),
  ]);
  const p50 = (key: string) => percentile(f.latency[key]!, 50);
  const graphileBest = Math.min(p50("graphile-default"), p50("graphile-tuned"));
  const best = Math.min(p50("durable-worker"), percentile(f.advanceLatency, 50));
  console.log(
    `\n  Target: our p50 (worker mode or advance after start) at or below graphile-worker's best: ${ms(best)} vs ` +
      `${ms(graphileBest)}, ${best <= graphileBest ? "met" : "NOT MET"}.`,
  );
}
