// Sections 1–4 of npm run bench (scripts/bench.ts): the engine on PostgreSQL and PGlite, in this process.
import { claimLatency } from "./claim-latency";
import { claimsPerRun, REPLAY_RUNS } from "./replays";
import { ms, ratio, table } from "./report";
import { roundTrips } from "./round-trips";
import { CHILDREN, parentWithChildren } from "./children";
import { startToCompletion } from "./start-latency";
import { heading } from "./section-heading";
import { throughputSection } from "./throughput-section";

const _RUNS = 2_000;
const _LOOPS = 8;
const _RAW_STEPS = 3_000;
const _PROTOCOL_RUNS = 1_000;
const _WARMUP_RUNS = 300;
const LATENCY_SAMPLES = 200;
export const CLAIM_SAMPLES = 500;
export const FINISHED_RUNS = 1_000_000;
const CHILD_SAMPLES = 30;

/** Sections 1–4: the engine on PostgreSQL and PGlite, in this process. */
export async function coreSections(): Promise<void> {
  await roundTripsSection();
  await childrenSection();
  await throughputSection();
  await latencySection();
  await claimLatencySection();
}

/** Section 1: the statements each operation costs, and the claims a run with sleeps takes. */
async function roundTripsSection(): Promise<void> {
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
}

/** Section 3: start to completion of one run, one at a time. */
async function latencySection(): Promise<void> {
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
}

/** Section 4: the claim with 1,000,000 finished runs beside an empty table, and its plan. */
async function claimLatencySection(): Promise<void> {
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
export async function childrenSection(): Promise<void> {
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
