// Peers in the same run (docs/performance.md, "Peers"): durable-next beside graphile-worker and
// pg-boss, each in two configurations (its default and its documented throughput one; ours:
// worker mode and tick loops), and DBOS in one (its queue), on one workload. A job is 3 receipt
// inserts, each its own transaction: for the peers a handler that inserts 3 rows into a receipts
// table (primary key (job, step), on conflict do nothing; for DBOS 3 steps of a workflow); for us
// a run of 3 `run` steps, whose receipts the engine writes. Jobs are enqueued first (untimed),
// then drained by 1 or 10 concurrent loops; each drain has a fresh database. Each drain's CPU is
// counted in this process and in the database's server backends, and, through the delaying proxy
// (--rtt), its round trips. Latency is enqueue to completion of one job on an idle system, seen
// through LISTEN on a trigger that fires when the job's completion commits.
// scripts/bench/peers-section.ts prints it all.
import pg from "pg";
import { type CpuSpent, measureSessionsCpu } from "./cpu";
import { freshServerDatabase, SERVER_URL } from "./databases";
import type { DelayProxy } from "./delay-proxy";
import { countThirdReceipts, type PeerConfiguration, type PeerUrls } from "./peer-contender";
import { advanceAfterStart, durableConfigurations } from "./peer-durable";
import { graphileConfigurations } from "./peer-graphile";
import { dbosConfigurations } from "./peer-dbos";
import { pgBossConfigurations } from "./peer-pg-boss";
import { measureStatements, type ServerStatements, statementStatsUnavailable } from "./statement-stats";
import { type StatementTimes, statementTimer } from "./throughput";

export const PEER_LOOPS = [1, 10] as const;
export const PEER_LATENCY_SAMPLES = 30;
export const COLD_START_SAMPLES = 15;
const WARMUP_JOBS = 300;

/** Ours first, then each peer's configurations: default and tuned, DBOS's queue (the order of the first round). */
export const CONFIGURATIONS: readonly PeerConfiguration[] = [
  ...durableConfigurations,
  ...graphileConfigurations,
  ...pgBossConfigurations,
  ...dbosConfigurations,
];

export interface DrainFigures {
  runsPerSecond: number;
  seconds: number;
  cpu: CpuSpent;
  /** Round trips counted by the delaying proxy during the drain (null without --rtt). */
  roundTrips: number | null;
}

/** What a drain measures besides its rate: our statements at the driver, and at the server. */
interface Probes {
  timer?: ReturnType<typeof statementTimer>;
  serverStatements?: boolean;
}

const suffix = (config: PeerConfiguration) => `peers_${config.key.replace(/\W/g, "_")}`;

/** A fresh database for `config`; its workers connect through `proxy` when there is one. */
async function freshUrls(config: PeerConfiguration, proxy: DelayProxy | null): Promise<PeerUrls> {
  const direct = await freshServerDatabase(suffix(config));
  return { direct, worker: proxy ? proxy.through(direct) : direct };
}

/**
 * Drains `jobs` enqueued jobs with `loops` loops, timed from the workers' start until every job's
 * last receipt is in and every completion has committed; receipts are counted after.
 */
async function drain(
  config: PeerConfiguration,
  jobs: number,
  loops: number,
  proxy: DelayProxy | null,
  probes: Probes = {},
): Promise<DrainFigures & { serverStatements?: ServerStatements }> {
  const urls = await freshUrls(config, proxy);
  const contender = await config.make(urls);
  try {
    await contender.enqueue(jobs);
    const statements = probes.serverStatements ? await measureStatements(urls.direct) : null;
    let bodies = 0;
    const allBodies = new Promise<void>((resolve) => {
      countThirdReceipts(() => {
        if (++bodies === jobs) resolve();
      });
    });
    const cpu = await measureSessionsCpu(urls.direct);
    const trips0 = proxy ? await proxy.roundTrips() : 0;
    probes.timer?.reset();
    const t0 = performance.now();
    await contender.start(loops, probes.timer?.onQuery);
    await allBodies;
    while ((await contender.remaining()) > 0) await new Promise((r) => setTimeout(r, 2));
    const seconds = (performance.now() - t0) / 1000;
    probes.timer?.end();
    const spent = await cpu();
    const roundTrips = proxy ? (await proxy.roundTrips()) - trips0 : null;
    const serverStatements = await statements?.stop();
    const receipts = await contender.receipts();
    if (receipts !== jobs * 3 || bodies !== jobs) {
      throw new Error(
        `${config.key}: ${receipts} receipts and ${bodies} job bodies for ${jobs} jobs (want ${jobs * 3})`,
      );
    }
    return { runsPerSecond: jobs / seconds, seconds, cpu: spent, roundTrips, serverStatements };
  } finally {
    countThirdReceipts(null);
    await contender.stop();
  }
}

/** Enqueue to completion of one job at a time on an idle system, `samples` times (ms each). */
async function latency(
  config: PeerConfiguration,
  samples: number,
  offset: number,
  proxy: DelayProxy | null,
): Promise<number[]> {
  const urls = await freshUrls(config, proxy);
  const contender = await config.make(urls);
  const listener = new pg.Client({ connectionString: urls.direct });
  await listener.connect();
  await listener.query("listen bench_done");
  let done: (() => void) | null = null;
  listener.on("notification", () => done?.());
  try {
    await contender.start(1);
    await new Promise((r) => setTimeout(r, 200)); // the worker reaches its idle wait
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const completed = new Promise<void>((resolve) => {
        done = resolve;
      });
      const t0 = performance.now();
      await contender.enqueueOne(offset + i);
      await completed;
      times.push(performance.now() - t0);
      // A pause between samples, so each one starts from an idle worker at a random poll phase.
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
    }
    return times;
  } finally {
    done = null;
    await listener.end();
    await contender.stop();
  }
}

export interface PeerOptions {
  rounds: number;
  jobs: number;
  /** The delaying proxy every worker connects through (--rtt), or null. */
  proxy: DelayProxy | null;
  progress: (line: string) => void;
}

export interface PeerFigures {
  /** Per configuration key and loop count, one drain per round. */
  drains: Record<string, Record<number, DrainFigures[]>>;
  /** Enqueue-to-completion samples (ms) per configuration key (those with `latency`), all rounds. */
  latency: Record<string, number[]>;
  /** Our start, then advance(id) in process, same database kind (ms). */
  advanceLatency: number[];
  /** Our statements in the last 1-loop drain in worker mode: per kind, how many and the ms from send to next send. */
  statements: StatementTimes;
  /** pg_stat_statements of our last 1-loop drains, per our configuration key; or why not measured. */
  serverStatements: Record<string, ServerStatements> | string;
}

/** The configurations in round `round`'s order: the systems rotate, a system's configurations stay together. */
function rotatedBySystem(round: number): PeerConfiguration[] {
  const systems = [...new Set(CONFIGURATIONS.map((c) => c.system))];
  const rotated = systems.map((_, i) => systems[(i + round) % systems.length]!);
  return rotated.flatMap((system) => CONFIGURATIONS.filter((c) => c.system === system));
}

/**
 * The peers section's measurements: `rounds` rounds, each draining with 1 and then 10 loops in
 * every configuration (the order of the systems rotates each round), then the latency samples of
 * each configuration that waits for jobs.
 */
export async function peers(options: PeerOptions): Promise<PeerFigures> {
  const { rounds, jobs, proxy, progress } = options;
  const drains: PeerFigures["drains"] = {};
  const latencies: PeerFigures["latency"] = {};
  for (const config of CONFIGURATIONS) {
    drains[config.key] = Object.fromEntries(PEER_LOOPS.map((loops) => [loops, []]));
    if (config.latency) latencies[config.key] = [];
  }
  const advanceLatency: number[] = [];
  const timer = statementTimer();
  const unavailable = await statementStatsUnavailable(SERVER_URL);
  const serverStatements: Record<string, ServerStatements> = {};
  // untimed: JIT-compiles each system's code and our engine before the first measured drain
  for (const config of CONFIGURATIONS) await drain(config, Math.min(WARMUP_JOBS, jobs), 2, proxy);
  for (let round = 0; round < rounds; round++) {
    const order = rotatedBySystem(round);
    const last = round === rounds - 1;
    for (const loops of PEER_LOOPS) {
      for (const config of order) {
        const ours = config.system === "durable" && loops === 1 && last;
        const probes: Probes = {
          timer: ours && config.key === "durable-worker" ? timer : undefined,
          serverStatements: ours && unavailable === null,
        };
        const figures = await drain(config, jobs, loops, proxy, probes);
        drains[config.key]![loops]!.push(figures);
        if (figures.serverStatements) serverStatements[config.key] = figures.serverStatements;
        progress(`round ${round + 1}, ${loops} loop(s), ${config.key}: ${Math.round(figures.runsPerSecond)} runs/s`);
      }
    }
    for (const config of order.filter((c) => c.latency)) {
      latencies[config.key]!.push(...(await latency(config, PEER_LATENCY_SAMPLES, round * 1000, proxy)));
    }
    const urls = await freshUrls(durableConfigurations[0]!, proxy);
    advanceLatency.push(...(await advanceAfterStart(urls, PEER_LATENCY_SAMPLES, round * 1000)));
  }
  return {
    drains,
    latency: latencies,
    advanceLatency,
    statements: timer.times,
    serverStatements: unavailable ?? serverStatements,
  };
}
