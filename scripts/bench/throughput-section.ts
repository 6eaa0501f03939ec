// Section 2 of npm run bench (scripts/bench.ts): throughput on PostgreSQL and PGlite, each drain
// bracketed by raw 1-connection loops, and where a run's time goes.
import type { CpuSpent } from "./cpu";
import { ms, perSecond, ratio, table } from "./report";
import { profileRun } from "./round-trips";
import { heading } from "./section-heading";
import {
  drainOnPGlite,
  drainOnServer,
  protocolLoop,
  rawLoop,
  STEPS_PER_RUN,
  threeSteps,
  type Drain,
  type Raw,
  type StatementTimes,
} from "./throughput";

const RUNS = 2_000;
const LOOPS = 8;
const RAW_STEPS = 3_000;
const PROTOCOL_RUNS = 1_000;
const WARMUP_RUNS = 300;

/** What the throughput section measures, in the order it ran. */
interface Measured {
  steps: number;
  profile: Awaited<ReturnType<typeof profileRun>>;
  raws: Raw[];
  one: Drain;
  protocol: Drain;
  rawPool: Raw;
  eight: Drain;
  lite: Drain;
}

/** Section 2: the drains, then their table, the notes under it and where a run's time goes. */
export async function throughputSection(): Promise<void> {
  const measured = await measureThroughput();
  printThroughput(measured);
  printThroughputNotes(measured);
  printWhereTimeGoes(measured);
}

/** The drains and raw loops of section 2, in the order they must run. */
async function measureThroughput(): Promise<Measured> {
  // Each measurement is bracketed by a raw 1-connection loop and compared with the mean of its two
  // brackets, so a load change on the machine hits the figure and its reference alike.
  const steps = RUNS * STEPS_PER_RUN;
  // untimed: JIT-compiles the engine and the drivers before the first measured drain
  await drainOnServer(WARMUP_RUNS, 1);
  const profile = await profileRun("postgres", threeSteps, { n: 1 }, [
    "create table bench_effects (id bigserial primary key, run_id text not null, step text not null)",
  ]);
  const raws: Raw[] = [await rawLoop(RAW_STEPS, 1)];
  const one = await drainOnServer(RUNS, 1);
  raws.push(await rawLoop(RAW_STEPS, 1));
  const protocol = await protocolLoop(PROTOCOL_RUNS);
  raws.push(await rawLoop(RAW_STEPS, 1));
  const rawPool = await rawLoop(steps, LOOPS);
  const eight = await drainOnServer(RUNS, LOOPS);
  raws.push(await rawLoop(RAW_STEPS, 1));
  const lite = await drainOnPGlite(RUNS);
  raws.push(await rawLoop(RAW_STEPS, 1));
  return { steps, profile, raws, one, protocol, rawPool, eight, lite };
}

/** CPU per step: this process's and the server backends' ("-" when not measured). */
const cpuPerStep = (cpu: CpuSpent, n: number) => [
  `${((cpu.node * 1000) / n).toFixed(0)} µs`,
  cpu.server === null ? "-" : `${((cpu.server * 1000) / n).toFixed(0)} µs`,
];

/** One row of the throughput table. */
const row = (
  label: string,
  runsPerSecond: number | null,
  stepsPerSecond: number,
  reference: number,
  pool: string,
  commitsPerStep: string,
  cpu: string[],
  seconds: number,
): string[] => [
  label,
  runsPerSecond === null ? "-" : perSecond(runsPerSecond),
  perSecond(stepsPerSecond),
  perSecond(reference),
  ratio(stepsPerSecond / reference),
  pool,
  commitsPerStep,
  ...cpu,
  `${seconds.toFixed(1)} s`,
];

/** The throughput table: each drain against the raw loops that bracket it. */
function printThroughput({ steps, profile, raws, one, protocol, rawPool, eight, lite }: Measured): void {
  const bracket = (i: number) => (raws[i]!.stepsPerSecond + raws[i + 1]!.stepsPerSecond) / 2;
  heading(
    `2. Throughput: ${RUNS.toLocaleString("en-US")} runs × ${STEPS_PER_RUN} steps (run, tx with one insert, value) = ` +
      `${steps.toLocaleString("en-US")} steps, drained until a tick claims nothing`,
  );
  const commits = (profile.commits / STEPS_PER_RUN).toFixed(2);
  const drain = (label: string, d: Drain, reference: number, pool: string, commitsPerStep: string) =>
    row(
      label,
      d.runsPerSecond,
      d.stepsPerSecond,
      reference,
      pool,
      commitsPerStep,
      cpuPerStep(d.cpu, d.steps),
      d.seconds,
    );
  table([
    [
      "loop",
      "runs/s",
      "steps/s",
      "raw 1-conn ref",
      "vs raw 1 conn",
      `vs raw ${LOOPS} on pool`,
      "commits/step",
      "node CPU/step",
      "server CPU/step",
      "time",
    ],
    drain("durable, pg, 1 tick loop (pool of 2)", one, bracket(0), "-", commits),
    drain(
      `durable, pg, ${LOOPS} tick loops (${LOOPS} × createDurable, pool of 2)`,
      eight,
      bracket(2),
      ratio(eight.stepsPerSecond / rawPool.stepsPerSecond),
      commits,
    ),
    drain("durable, PGlite, 1 tick loop (serialised: 1 session)", lite, bracket(3), "-", "-"),
    row(
      `raw pg, ${LOOPS} loops on a pg pool of ${LOOPS}`,
      null,
      rawPool.stepsPerSecond,
      bracket(2),
      ratio(1),
      "1",
      cpuPerStep(rawPool.cpu, rawPool.transactions),
      rawPool.seconds,
    ),
    drain(
      `engine's SQL by hand, 1 pg conn (${PROTOCOL_RUNS.toLocaleString("en-US")} runs, no engine JS)`,
      protocol,
      bracket(1),
      "-",
      commits,
    ),
  ]);
}

/** What the table's columns mean, and the claims, lock waits and statements behind it. */
function printThroughputNotes({ profile, raws, one, eight, lite }: Measured): void {
  console.log(
    `
  raw = begin; insert; commit per step. "raw 1-conn ref": the mean of the raw 1-connection loops run just before and
  just after that row (${RAW_STEPS.toLocaleString("en-US")} steps each), ` +
      `so a load change on the machine hits a figure and its reference alike:
    ${raws.map((r) => perSecond(r.stepsPerSecond)).join(", ")}; ` +
      `CPU/step node ${cpuPerStep(raws[0]!.cpu, RAW_STEPS).join(", server ")}; 1 commit/step.
  claims for ${RUNS.toLocaleString("en-US")} runs ` +
      `(given back unfinished at the end of a tick's budget, then claimed again):
    ${[
      [`1 loop`, one],
      [`${LOOPS} loops`, eight],
      ["PGlite", lite],
    ]
      .map(([label, d]) => `${label}: ${(d as Drain).claims} (${(d as Drain).yielded} given back)`)
      .join("; ")}.
  sessions waiting on a lock during the ${LOOPS}-loop drain (pg_stat_activity, ${eight.lockWaits!.samples} samples): ` +
      `mean ${eight.lockWaits!.mean.toFixed(2)}, max ${eight.lockWaits!.max}.
  statements per run, traced at the driver: ${profile.statements}, of which ${profile.commits} commit ` +
      `(the raw loop: ${3 * STEPS_PER_RUN} and ${STEPS_PER_RUN} per ${STEPS_PER_RUN} steps):
    ${profile.sequence.join(" → ")}
  CPU/step: this process (all ${LOOPS} tick loops share its one JS thread; on PGlite it includes the database) and the
  server backends of the measured database (from /proc; "-" when not on this machine).`,
  );
}

/** The 1-loop drain statement by statement, beside the raw loop, and the server time in the SQL functions. */
function printWhereTimeGoes({ raws, one }: Measured): void {
  heading(
    "   Where a run's time goes: the 1-loop drain on PostgreSQL, statement by statement " +
      "(send to next send, so it includes\n   the JavaScript after each result; sums to the wall time), " +
      "next to the raw 1-connection loop before it",
  );
  const perRun = (times: StatementTimes, units: number) => {
    const rows: string[][] = [];
    let total = 0;
    for (const [kind, { count, ms: spent }] of times) {
      if (count < units / 2) continue; // the statements that end a tick (a claim finding nothing)
      rows.push([kind, (count / units).toFixed(2), ms(spent / count), ms(spent / units)]);
      total += spent / units;
    }
    return { rows, total };
  };
  const engineTimes = perRun(one.statements!, RUNS);
  const rawTimes = perRun(raws[0]!.statements!, RAW_STEPS / STEPS_PER_RUN);
  table([
    ["statement", "per run", "each", "per run"],
    ...engineTimes.rows,
    [`total (wall per run: ${ms((one.seconds * 1000) / RUNS)})`, "", "", ms(engineTimes.total)],
    ["raw loop, per 3 steps:", "", "", ""],
    ...rawTimes.rows,
    [
      `total (wall per 3 steps: ${ms((raws[0]!.seconds * 1000 * STEPS_PER_RUN) / RAW_STEPS)})`,
      "",
      "",
      ms(rawTimes.total),
    ],
  ]);
  if (one.functions?.length) {
    heading(
      "   Server time inside the engine's SQL functions during the 1-loop drain " +
        "(pg_stat_user_functions, track_functions = pl)",
    );
    table([
      ["function", "calls", "per run", "ms per call", "ms per run"],
      ...one.functions.map((f) => [
        f.name,
        String(f.calls),
        (f.calls / RUNS).toFixed(2),
        (f.totalMs / f.calls).toFixed(3),
        (f.totalMs / RUNS).toFixed(3),
      ]),
      ["total", "", "", "", (one.functions.reduce((a, f) => a + f.totalMs, 0) / RUNS).toFixed(3)],
    ]);
    console.log(
      "\n  (the rest of a statement's time: the round trip, parse/plan, the commit and its WAL flush, the driver)",
    );
  }
}
