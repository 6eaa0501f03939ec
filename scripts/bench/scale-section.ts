// Section 5 of npm run bench (scripts/bench.ts): the scale-out figures of scripts/bench/scale-out.ts, printed.
import { ms, perSecond, ratio, table } from "./report";
import {
  KEY_LIMIT,
  KEYED_RUNS,
  LATENCY_SAMPLES as WORKER_LATENCY_SAMPLES,
  PROVIDER_MS,
  SAMPLE_MS,
  TENANTS,
  WORKER_CONCURRENCY,
} from "./scale-out/settings";
import { type ScaleOut, scaleOut } from "./scale-out";
import { heading } from "./section-heading";

/** Section 5: scale-out through the tick route of `next start`, and worker mode (scripts/bench/scale-out.ts). */
export async function scaleSection(runs: number): Promise<void> {
  const s = await scaleOut(runs);
  const breaches = [...printModes(s, runs), ...printKeys(s)];
  printWorkerLatency(s);
  if (breaches.length > 0) {
    console.log(`\n  SCALE-OUT CORRECTNESS: ${breaches.join("; ")}`);
    process.exitCode = 1;
  }
}

/** The drain of each mode and the notes under it; returns what broke a correctness rule. */
function printModes(s: ScaleOut, runs: number): string[] {
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
  return breaches;
}

/** The concurrency keys drained by each driver; returns what broke the limit. */
function printKeys(s: ScaleOut): string[] {
  const breaches: string[] = [];
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
  return breaches;
}

/** A worker's start to completion of one run. */
function printWorkerLatency(s: ScaleOut): void {
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
}
