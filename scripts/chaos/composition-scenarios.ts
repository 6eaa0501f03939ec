// Chaos scenario 11 (docs/invariants.md): parents and children under a nemesis.
import { sql, type Kysely } from "kysely";
import type { FailpointName } from "../../lib/durable/engine/run/failpoints";
import { createDurable } from "../../lib/durable";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import { seeded } from "./random";
import { CHAOS_CHILDREN, chaosParent, chaosWorkflows, composeExpectation } from "./workflow";
import { checkCompositionInvariants } from "./compose-invariants";
import { spawnWorker, type Worker } from "./workers";
import { events, ready, type Scale, type ScenarioResult, sleep } from "./scenario-support";
import { nemesis } from "./nemesis";
import { until } from "./scenario-waits";

/** Where scenario 11's workers kill themselves: around a parent's suspension, a child's start and a run's end. */
const COMPOSE_FAILPOINTS: FailpointName[] = [
  "claim.after",
  "suspend.before",
  "suspend.after",
  "start.after-insert",
  "run.after-body",
  "finish.before",
  "finish.after",
];

/**
 * 11: parents and children under kills and pauses. Parents (started in waves) invoke 3 chaos
 * orders at once, start a fourth and race its end against a signal (delivered to parents at
 * random) and a 3 s sleep; a nemesis kills workers and freezes them past their leases, and the
 * workers kill themselves at random failpoints, the suspension's and a child's start among them.
 * I11–I13 (compose-invariants.ts) are checked beside I1–I10.
 */
export async function parentsAndChildren(scale: Scale): Promise<ScenarioResult> {
  const parents = scale.full ? 200 : 40;
  const workerCount = scale.full ? 8 : 4;
  const durationMs = scale.full ? 40_000 : 12_000;
  const random = seeded(scale.seed + 11);
  const { url, db } = await createChaosDatabase("durable_chaos_compose");
  const everyWorker: Worker[] = [];
  const spawn = () => {
    const worker = spawnWorker(url, {
      IDLE_EXIT_MS: String(durationMs + 5_000),
      KILL_RATE: "0.03",
      KILL_POINTS: COMPOSE_FAILPOINTS.join(","),
      SEED: String(scale.seed + 1_100 + everyWorker.length),
    });
    everyWorker.push(worker);
    return worker;
  };
  const workers: Worker[] = Array.from({ length: workerCount }, spawn);
  await until(() => workers.every(ready));
  const counts = await composeStorm(db, { parents, durationMs, random, workers, spawn });
  await sleep(6_000); // every paused worker has resumed
  for (const w of workers) w.child.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.exited));
  const problems = await drain(url, db);
  const { rows } = await sql<{ branch: string; n: number }>`
    select result ->> 'branch' as branch, count(*)::int as n from durable_steps where kind = 'any' group by 1`.execute(
    db,
  );
  const won = (branch: string) => rows.find((r) => r.branch === branch)?.n ?? 0;
  const killedAt = (point: RegExp) => everyWorker.filter((w) => point.test(w.output())).length;
  return {
    id: "11",
    name: `${parents} parents × ${CHAOS_CHILDREN} invoked children + 1 raced, ${workerCount} workers killed and paused`,
    db,
    problems,
    expectation: composeExpectation,
    invariants: checkCompositionInvariants,
    counts: {
      parents,
      children: await childCount(db),
      ...counts,
      "killed at a failpoint": killedAt(/FAILPOINT /),
      "of them parking a parent or starting a child": killedAt(/FAILPOINT (suspend|start)\./),
      "won by the child": won("late"),
      "won by the signal": won("go"),
      "won by the sleep": won("nap"),
      heals: await events(db, ["heal"]),
      "late writes refused": await events(db, ["fence.rejected", "step.outcome-conflict"]),
    },
  };
}

const childCount = async (db: Kysely<any>) =>
  (await sql<{ n: number }>`select count(*)::int as n from durable_runs where parent_id is not null`.execute(db))
    .rows[0]!.n;

/**
 * Scenario 11's storm: parents started in 8 waves, signals delivered to parents at random, a
 * nemesis move every 0.3–0.8 s, and workers that killed themselves at a failpoint replaced.
 */
async function composeStorm(
  db: Kysely<any>,
  o: { parents: number; durationMs: number; random: () => number; workers: Worker[]; spawn: () => Worker },
): Promise<{ kills: number; pauses: number; "signals delivered": number }> {
  const durable = createDurable({ db, workflows: chaosWorkflows, secrets: { durable: "chaos" }, log: () => {} });
  const ids = Array.from({ length: o.parents }, (_, i) => `parent-${String(i).padStart(4, "0")}`);
  const counts = { kills: 0, pauses: 0, "signals delivered": 0 };
  let started = 0;
  const start = performance.now();
  for (let elapsed = 0; started < o.parents || elapsed < o.durationMs; elapsed = performance.now() - start) {
    const due = Math.min(o.parents, Math.ceil((elapsed / o.durationMs) * 8) * (o.parents / 8));
    if (due > started) {
      const wave = ids.slice(started, due);
      const work = () => [Math.floor(o.random() * 150), Math.floor(o.random() * 60)];
      await durable.startMany(
        chaosParent,
        wave.map(() => ({ work: work() })),
        { ids: wave },
      );
      started = due;
    }
    await sleep(300 + o.random() * 500);
    if (started > 0 && o.random() < 0.6) {
      // To a parent not yet at its race, in it, or past it (then the delivery stays untaken).
      const runId = ids[Math.floor(o.random() * started)]!;
      const sent = await durable.signal({ runId, name: "go", payload: counts["signals delivered"] }).catch(() => null);
      if (sent) counts["signals delivered"]++;
    }
    const move = nemesis(o.workers, o.random, o.spawn);
    if (move) counts[move === "kill" ? "kills" : "pauses"]++;
    o.workers.forEach(({ child }, i) => {
      if (child.exitCode !== null || child.signalCode !== null) o.workers[i] = o.spawn(); // killed at a failpoint
    });
  }
  return counts;
}
