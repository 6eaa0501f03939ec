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
import { dropCreatedDatabases } from "./bench/databases";
import { claimLatency } from "./bench/claim-latency";
import { loadAverage, machine } from "./bench/machine";
import { claimsPerRun, REPLAY_RUNS } from "./bench/replays";
import { heading as title, ms, perSecond, ratio, table } from "./bench/report";
import { profileRun, roundTrips } from "./bench/round-trips";
import { CHILDREN, parentWithChildren } from "./bench/children";
import { startToCompletion } from "./bench/start-latency";
import { tracingSection } from "./bench/tracing";
import { retentionSection } from "./bench/retention";
import { ensurePeerPackages } from "./bench/peer-packages";
import { PEER_JOBS, PEER_ROUNDS } from "./bench/peer-contender";
import { operationsSection } from "./bench/operations";
import { priorityWalkRows } from "./bench/priority-walk";
import { flowControlSection } from "./bench/flow-control";
import type { CpuSpent } from "./bench/cpu";
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
} from "./bench/throughput";
import {
  KEY_LIMIT,
  KEYED_RUNS,
  LATENCY_SAMPLES as WORKER_LATENCY_SAMPLES,
  PROVIDER_MS,
  SAMPLE_MS,
  TENANTS,
  WORKER_CONCURRENCY,
} from "./bench/scale-out/settings";
import { scaleOut } from "./bench/scale-out";

const RUNS = 2_000;
const LOOPS = 8;
const RAW_STEPS = 3_000;
const PROTOCOL_RUNS = 1_000;
const WARMUP_RUNS = 300;
const LATENCY_SAMPLES = 200;
const CLAIM_SAMPLES = 500;
const FINISHED_RUNS = 1_000_000;
const SCALE_RUNS = 2_000;
const CHILD_SAMPLES = 30;
type Section =
  | "core"
  | "children"
  | "scale"
  | "tracing"
  | "retention"
  | "peers"
  | "operations"
  | "flow"
  | "priority-walk";
const SECTIONS: readonly Section[] = [
  "core",
  "children",
  "scale",
  "tracing",
  "retention",
  "peers",
  "operations",
  "flow",
  "priority-walk",
];
const began = performance.now();
const options = parseOptions(process.argv.slice(2));

/** A section title, with the machine's 1-minute load average when the section's figures were taken. */
const heading = (text: string) => title(`${text}  [load ${loadAverage().split(" ")[0]}]`);

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
} finally {
  await dropCreatedDatabases();
}
console.log(`\nbench took ${((performance.now() - began) / 1000).toFixed(0)} s; load average now ${loadAverage()}`);

/** Sections 1–4: the engine on PostgreSQL and PGlite, in this process. */
async function coreSections(): Promise<void> {
  // ── 1. Round trips ─────────────────────────────────────────────────────────────────────────
  const rt = { pglite: await roundTrips("pglite"), postgres: await roundTrips("postgres") };
  heading(
    "1. Database round trips per operation (statements tagged at the driver via onQuery; docs/performance.md floors)",
  );
  const c = (t: "pglite" | "postgres", op: keyof (typeof rt)["pglite"]["count"]) => String(rt[t].count[op]);
  const tx = (t: "pglite" | "postgres") => `${rt[t].txOwn} + ${rt[t].count["tx step"] - rt[t].txOwn}`;
  table([
    ["operation", "floor", "PGlite", "PostgreSQL"],
    ["start", "1", c("pglite", "start"), c("postgres", "start")],
    ["claim + ledger load", "1", c("pglite", "claim"), c("postgres", "claim")],
    ["run step", "1", c("pglite", "run step"), c("postgres", "run step")],
    ["tx step (1 own statement)", "1 + 3", tx("pglite"), tx("postgres")],
    ["value step", "1", c("pglite", "value step"), c("postgres", "value step")],
    ["sleep suspension", "1", c("pglite", "sleep suspension"), c("postgres", "sleep suspension")],
    ["claim after the sleep (+ receipts)", "1", c("pglite", "wake claim"), c("postgres", "wake claim")],
    ["completion (+ the tick's next claim)", "1", c("pglite", "completion"), c("postgres", "completion")],
    [
      "a tick's last claim, finding nothing (2 ticks; the 2nd rides on its completion)",
      "1 per tick",
      c("pglite", "empty claim"),
      c("postgres", "empty claim"),
    ],
    [
      "a tick's end: the next wake time for its report (2 ticks)",
      "1 per tick",
      c("pglite", "tick end"),
      c("postgres", "tick end"),
    ],
  ]);
  const replays = {
    on: { pglite: await claimsPerRun("pglite", "5s"), postgres: await claimsPerRun("postgres", "5s") },
    off: { pglite: await claimsPerRun("pglite", "0ms"), postgres: await claimsPerRun("postgres", "0ms") },
  };
  heading(`   Claims per completed run: 5 steps and 2 sleeps of 200 ms (mean of ${REPLAY_RUNS} runs)`);
  table([
    ["in-process waits", "PGlite", "PostgreSQL"],
    ["on (inProcessWait 5s)", String(replays.on.pglite), String(replays.on.postgres)],
    ["off (inProcessWait 0)", String(replays.off.pglite), String(replays.off.postgres)],
  ]);

  await childrenSection();

  // ── 2. Throughput ──────────────────────────────────────────────────────────────────────────
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
  const bracket = (i: number) => (raws[i]!.stepsPerSecond + raws[i + 1]!.stepsPerSecond) / 2;
  heading(
    `2. Throughput: ${RUNS.toLocaleString("en-US")} runs × ${STEPS_PER_RUN} steps (run, tx with one insert, value) = ` +
      `${steps.toLocaleString("en-US")} steps, drained until a tick claims nothing`,
  );
  const commits = (profile.commits / STEPS_PER_RUN).toFixed(2);
  const cpuPerStep = (cpu: CpuSpent, n: number) => [
    `${((cpu.node * 1000) / n).toFixed(0)} µs`,
    cpu.server === null ? "-" : `${((cpu.server * 1000) / n).toFixed(0)} µs`,
  ];
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

  // ── 3. Start-to-completion latency ─────────────────────────────────────────────────────────
  const latency = {
    postgres: await startToCompletion("postgres", LATENCY_SAMPLES),
    pglite: await startToCompletion("pglite", LATENCY_SAMPLES),
  };
  heading(
    "3. Latency from start to completion of one 3-step run " +
      `(start, then advance(id) at once; ${LATENCY_SAMPLES} samples, one at a time)`,
  );
  table([
    ["database", "p50", "p99", "mean"],
    ["PostgreSQL (pg)", ms(latency.postgres.p50), ms(latency.postgres.p99), ms(latency.postgres.mean)],
    ["PGlite (in-memory)", ms(latency.pglite.p50), ms(latency.pglite.p99), ms(latency.pglite.mean)],
  ]);

  // ── 4. Claim latency with 1,000,000 finished runs ──────────────────────────────────────────
  const claims = await claimLatency(CLAIM_SAMPLES, FINISHED_RUNS);
  heading(
    "4. Claim latency: select durable_claim_run(...) round trip, " +
      `${CLAIM_SAMPLES} claims of freshly started due runs (PostgreSQL)`,
  );
  table([
    ["durable_runs", "p50", "p99"],
    ["empty", ms(claims.empty.p50), ms(claims.empty.p99)],
    [
      `${FINISHED_RUNS.toLocaleString("en-US")} completed runs ` +
        `(inserted + analyzed in ${claims.fillSeconds.toFixed(1)} s)`,
      ms(claims.full.p50),
      ms(claims.full.p99),
    ],
    ["ratio (target: within 2×)", ratio(claims.full.p50 / claims.empty.p50), ratio(claims.full.p99 / claims.empty.p99)],
  ]);
  const usesIndex = (plan: string[]) =>
    plan.some((l) => l.includes("durable_runs_due")) && !plan.some((l) => /Seq Scan/.test(l));
  console.log(
    "\n  EXPLAIN (ANALYZE, BUFFERS) of the claim's pick query (from durable_claim_run, literal values), " +
      `${FINISHED_RUNS.toLocaleString("en-US")} finished runs:\n`,
  );
  for (const line of claims.plan) console.log(`    ${line}`);
  console.log(
    `\n  partial index durable_runs_due used: ${usesIndex(claims.plan) ? "yes" : "NO"}; ` +
      `in the generic plan plpgsql may cache: ${usesIndex(claims.genericPlan) ? "yes" : "NO"} ` +
      `(${claims.genericPlan.find((l) => l.includes("Scan"))?.trim()})`,
  );
  const worst = Math.max(claims.full.p50 / claims.empty.p50, 0);
  console.log(
    `  median claim with ${FINISHED_RUNS.toLocaleString("en-US")} finished runs is ${ratio(worst)} the empty table: ` +
      `${worst <= 2 ? "within" : "OUTSIDE"} the 2× target.`,
  );
}

/** Section 1's parent of 10 children: start to completion, and the statements it cost (scripts/bench/children.ts). */
async function childrenSection(): Promise<void> {
  const kids = {
    pglite: await parentWithChildren("pglite", CHILD_SAMPLES),
    postgres: await parentWithChildren("postgres", CHILD_SAMPLES),
  };
  heading(
    `   A parent invoking ${CHILDREN} children at once (one \`run\` step each), start to completion: start, then one ` +
      `tick\n   (${CHILD_SAMPLES} samples, one at a time); statements counted at the driver for one of them`,
  );
  const row = (label: string, k: (typeof kids)["pglite"]) => [
    label,
    ms(k.p50),
    ms(k.mean),
    String(k.statements),
    String(k.parentClaims),
  ];
  table([
    ["database", "p50", "mean", "statements", "claims of the parent"],
    row("PGlite (in-memory)", kids.pglite),
    row("PostgreSQL (pg)", kids.postgres),
  ]);
  console.log(`\n  the statements, PostgreSQL: ${kids.postgres.byKind.map(([k, n]) => `${k} ${n}`).join(", ")}`);
}

interface Options {
  only: Section | null;
  scaleRuns: number;
  peerJobs: number;
  peerRounds: number;
  /** --rtt: the peers section through the delaying proxy, adding this many ms a round trip. */
  rttMs: number | null;
}

/**
 * `--core` (sections 1–4 only), `--children` (section 1's parent of 10 children only), `--scale`
 * (section 5 only), `--tracing` (section 6 only), `--retention` (section 7 only), `--peers`
 * (section 8 only), `--operations` (section 9 only), `--flow` (section 10 only), `--priority-walk`
 * (section 11 only), `--scale-runs N`,
 * and for section 8 `--peer-jobs N`, `--peer-rounds N` and `--rtt <ms>`; anything else is refused.
 */
function parseOptions(args: string[]): Options {
  // The options that take a number: what they set, and the least they accept (whole numbers unless `fraction`).
  const NUMBER_OPTIONS = {
    "--scale-runs": { key: "scaleRuns", min: 1, fraction: false, what: "runs" },
    "--peer-jobs": { key: "peerJobs", min: 1, fraction: false, what: "jobs" },
    "--peer-rounds": { key: "peerRounds", min: 1, fraction: false, what: "rounds" },
    "--rtt": { key: "rttMs", min: 0, fraction: true, what: "milliseconds" },
  } as const;
  const parsed: Options = {
    only: null,
    scaleRuns: SCALE_RUNS,
    peerJobs: PEER_JOBS,
    peerRounds: PEER_ROUNDS,
    rttMs: null,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const section = SECTIONS.find((s) => arg === `--${s}`);
    const name = Object.keys(NUMBER_OPTIONS).find((n) => arg === n || arg.startsWith(`${n}=`));
    if (section) parsed.only = section;
    else if (name) {
      const option = NUMBER_OPTIONS[name as keyof typeof NUMBER_OPTIONS];
      const value = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[++i];
      const n = Number(value);
      if (
        value === undefined ||
        value === "" ||
        !Number.isFinite(n) ||
        n < option.min ||
        (!option.fraction && !Number.isInteger(n))
      ) {
        const kind = option.fraction ? "a number of" : "a whole number of";
        console.error(`${name} takes ${kind} ${option.what} >= ${option.min}, not ${JSON.stringify(value)}`);
        process.exit(2);
      }
      parsed[option.key] = n;
    } else {
      console.error(
        `unknown option ${arg}: npm run bench ` +
          "[-- --core | --children | --scale | --tracing | --retention | --peers | --operations | --flow | " +
          "--priority-walk] " +
          "[--scale-runs N] [--peer-jobs N] [--peer-rounds N] [--rtt <ms>]",
      );
      process.exit(2);
    }
  }
  return parsed;
}

/** Section 5: scale-out through the tick route of `next start`, and worker mode (scripts/bench/scale-out.ts). */
async function scaleSection(runs: number): Promise<void> {
  const s = await scaleOut(runs);
  const n = runs.toLocaleString("en-US");
  heading(
    `5. Scale-out: a backlog of ${n} due runs, each one step calling a mock provider that answers after ` +
      `${PROVIDER_MS} ms,\n   drained through GET /api/durable/tick of \`next start\` ` +
      "(a fresh app made by add-to-app, " +
      `built in ${(s.buildMs / 1000).toFixed(0)} s;\n   one caller with the cron bearer, calling again as soon as a ` +
      "call returns), or by one worker process and no tick at all",
  );
  const rate = (v: number) => (v < 100 ? `${v.toFixed(1)}/s` : perSecond(v));
  const serial = s.modes.find((m) => m.key === "serial")!;
  table([
    [
      "mode",
      "drain",
      "runs/s",
      "vs serial",
      "provider calls",
      "max in flight",
      "max running (db)",
      "tick calls",
      "fanned out",
    ],
    ...s.modes.map((m) =>
      m.skipped
        ? [`${m.label} (not measured)`, "-", "-", "-", "-", "-", "-", "-", "-"]
        : [
            m.label,
            `${m.seconds.toFixed(1)} s`,
            rate(m.runsPerSecond),
            ratio(serial.seconds / m.seconds),
            String(m.providerRequests),
            String(m.maxInFlight),
            String(m.maxExecuting),
            m.key === "worker" ? "-" : String(m.tickCalls),
            m.key === "worker" ? "-" : String(m.fannedOut),
          ],
    ),
  ]);
  const breaches: string[] = [];
  const measured = s.modes.filter((m) => !m.skipped);
  for (const m of measured) {
    if (m.providerRequests !== runs) breaches.push(`${m.key}: ${m.providerRequests} provider calls for ${n} runs`);
    if (m.duplicates > 0) breaches.push(`${m.key}: ${m.duplicates} runs called the provider more than once`);
  }
  const target = measured
    .filter((m) => m.key === "fanout" || m.key === "worker")
    .map((m) => {
      const x = serial.seconds / m.seconds;
      return `${m.key} ${ratio(x)} (${x >= 8 ? "meets" : "MISSES"} it)`;
    });
  const worker = measured.find((m) => m.key === "worker");
  console.log(
    `
  vs serial: serial's drain time over the mode's, both from this run. Target >= 8× serial: ${
    target.length ? target.join(", ") : "not measured"
  }.
  provider calls: requests the mock provider received during the drain; each run makes exactly one, so it must be ` +
      `${n}: ${measured.every((m) => m.providerRequests === runs && m.duplicates === 0) ? "it is" : "IT IS NOT"} ` +
      `in every mode measured.
  max in flight: provider calls in flight at once (the mock's count); max running (db): most runs \`running\` under ` +
      `a live lease,
  sampled every ${SAMPLE_MS} ms. tick calls: the caller's calls (the hops a call fans out to are not among them); ` +
      `fanned out: the sum of
  the caller's reports' \`fannedOut\`. The drain is timed from the first call (worker: the worker's start) to the ` +
      "sample finding no run left non-terminal." +
      (worker
        ? `\n  worker: stopped ${worker.stopMs!.toFixed(0)} ms after SIGTERM (its signal aborts); ` +
          `its report: ${JSON.stringify(worker.workReport)}.`
        : ""),
  );
  for (const m of s.modes.filter((m) => m.skipped)) console.log(`  not measured: ${m.label}: ${m.skipped}.`);

  heading(
    `   Concurrency keys: ${KEYED_RUNS} runs of a workflow with concurrency { key: (input) => input.tenant, ` +
      `limit: ${KEY_LIMIT} } over ${TENANTS} tenants;\n   most runs of one key seen \`running\` under a live lease ` +
      `(durable_runs sampled every ${SAMPLE_MS} ms), and the provider's calls in flight per key`,
  );
  const perKey = (values: Record<string, number>) => Object.values(values).join(" ");
  table([
    ["drained by", "max per key (db)", "max per key (provider)", "limit", "verdict", "drain", "samples"],
    ...s.keyed.map((k) => {
      if (k.skipped) return [`${k.via} (not measured: ${k.skipped})`, "-", "-", String(KEY_LIMIT), "-", "-", "-"];
      const db = Object.values(k.perKey);
      const over = [...db, ...Object.values(k.providerPerKey)].some((v) => v > KEY_LIMIT);
      if (over) breaches.push(`keys through the ${k.via}: over the limit of ${KEY_LIMIT}`);
      if (k.providerRequests !== KEYED_RUNS) {
        breaches.push(`keys through the ${k.via}: ${k.providerRequests} provider calls for ${KEYED_RUNS} runs`);
      }
      const verdict = over ? "OVER THE LIMIT" : db.every((v) => v === KEY_LIMIT) ? "= limit" : "below the limit";
      return [
        k.via,
        perKey(k.perKey),
        perKey(k.providerPerKey),
        String(KEY_LIMIT),
        verdict,
        `${k.seconds.toFixed(1)} s`,
        String(k.samples),
      ];
    }),
  ]);

  heading(
    `   Worker mode: start to completion of one 3-step run (start from this process with an idle worker running, ` +
      `concurrency ${WORKER_CONCURRENCY};\n   completion seen through LISTEN on a trigger of the bench's own, after ` +
      `its commit; ${WORKER_LATENCY_SAMPLES} samples, one at a time)`,
  );
  const l = s.latency;
  table([
    ["p50", "p99", "mean", "max"],
    l.skipped ? [`not measured: ${l.skipped}`, "", "", ""] : [ms(l.p50), ms(l.p99), ms(l.mean), ms(l.max)],
  ]);

  if (breaches.length > 0) {
    console.log(`\n  SCALE-OUT CORRECTNESS: ${breaches.join("; ")}`);
    process.exitCode = 1;
  }
}
