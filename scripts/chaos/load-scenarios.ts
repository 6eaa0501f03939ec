// Chaos scenarios 8–10 (docs/invariants.md): budgets, load with killed invocations, and fan-out.
import { sql } from "kysely";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import { seeded } from "./random";
import { spawnWorker, type Worker } from "./workers";
import { events, type Scale, type ScenarioResult, sleep, startRuns } from "./scenario-support";
import { unfinished } from "./scenario-waits";

/**
 * 8: short budgets and steps of random length: nothing starts that cannot finish, nothing written after the lease
 * (a write that reaches the database after it is refused: docs/rules.md, rule 11a); killed workers recovered once.
 */
export async function budgets(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 1_000 : 150;
  const random = seeded(scale.seed + 8);
  const { url, db } = await createChaosDatabase("durable_chaos_budget");
  await startRuns(db, runs, () => [Math.floor(random() * 700), Math.floor(random() * 400)]);
  const workers = Array.from({ length: 4 }, (_, i) =>
    spawnWorker(url, {
      WORKER_BUDGET_MS: "1500",
      IDLE_EXIT_MS: "3000",
      KILL_RATE: "0.02",
      SEED: String(scale.seed + i),
    }),
  );
  const exits = await Promise.all(workers.map((w) => w.exited));
  const problems = await drain(url, db, 1_500);
  const late = await sql<{ run_id: string; step_id: string }>`
    select r.run_id, r.step_id from chaos_receipts r
      join chaos_claims c on c.run_id = r.run_id and c.fence = r.fence
     where r.at > c.lease_until`.execute(db);
  problems.push(...late.rows.map((r) => `receipt ${r.run_id}/${r.step_id} written after its claim's lease`));
  return {
    id: "8",
    name: "1.5 s budgets, steps of random length, 2% of invocations killed",
    db,
    problems,
    counts: {
      runs,
      "workers killed": exits.filter((exit) => exit.signal === "SIGKILL").length,
      yields: await events(db, ["budget.yield"]),
      heals: await events(db, ["heal"]),
      "late writes refused": await events(db, ["fence.rejected"]),
      "receipts after lease": late.rows.length,
    },
  };
}

/** 9: load: many runs drained by concurrent tick loops with 1% of invocations killed. */
export async function load(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 10_000 : 1_500;
  const loops = scale.full ? 16 : 6;
  const { url, db } = await createChaosDatabase("durable_chaos_load");
  await startRuns(db, runs);
  const started = performance.now();
  // Short invocations (1.4 s budgets: a tick claims a run or two), 1% of them killed somewhere.
  const workers = Array.from({ length: loops }, (_, i) =>
    spawnWorker(url, {
      WORKER_BUDGET_MS: "1400",
      IDLE_EXIT_MS: "1500",
      KILL_RATE: "0.01",
      SEED: String(scale.seed + 100 + i),
    }),
  );
  const exits = await Promise.all(workers.map((w) => w.exited));
  const problems = await drain(url, db);
  const seconds = (performance.now() - started) / 1000;
  return {
    id: "9",
    name: `${runs} runs × 3 steps, ${loops} tick loops, 1% of invocations killed`,
    db,
    problems,
    counts: {
      runs,
      "workers killed": exits.filter((e) => e.signal === "SIGKILL").length,
      heals: await events(db, ["heal"]),
      "steps/s incl. recovery": Math.round((runs * 3) / seconds),
    },
  };
}

/**
 * 10: fan-out: instances whose tick route fans out to itself (3 more invocations each, 4 runs at
 * once per tick), killed at random failpoints and paused past their leases while they drain.
 */
export async function fanOut(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 3_000 : 600;
  const instances = scale.full ? 6 : 3;
  const random = seeded(scale.seed + 10);
  const { url, db } = await createChaosDatabase("durable_chaos_fan_out");
  await startRuns(db, runs, () => [Math.floor(random() * 300), Math.floor(random() * 100)]);
  // Short invocations, so instances die mid-drain often.
  const env = (i: number) => ({
    WORKER_BUDGET_MS: "1500",
    IDLE_EXIT_MS: "2500",
    KILL_RATE: "0.1",
    TICK_CONCURRENCY: "4",
    FAN_OUT: "3",
    SEED: String(scale.seed + 200 + i),
  });
  let spawned = 0;
  const workers: Worker[] = Array.from({ length: instances }, () => spawnWorker(url, env(spawned++)));
  let pauses = 0;
  let restarts = 0;
  // A nemesis that freezes an instance past its leases now and then, and brings killed ones back.
  while ((await unfinished(db)) > runs / 10) {
    await sleep(300 + random() * 500);
    for (let i = 0; i < workers.length; i++) {
      const worker = workers[i]!;
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
        workers[i] = spawnWorker(url, env(spawned++));
        restarts++;
      }
    }
    const worker = workers[Math.floor(random() * workers.length)]!;
    if (!worker.paused && random() < 0.3 && worker.child.exitCode === null) {
      worker.child.kill("SIGSTOP");
      worker.paused = true;
      pauses++;
      setTimeout(() => {
        worker.child.kill("SIGCONT");
        worker.paused = false;
      }, 3_500);
    }
  }
  await sleep(4_000); // every paused instance has resumed
  for (const w of workers) w.child.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.exited));
  const problems = await drain(url, db);
  return {
    id: "10",
    name: `fan-out: ${instances} instances, tick route fanning out 3× with 4 runs per tick, killed and paused`,
    db,
    problems,
    counts: {
      runs,
      "instances restarted": restarts,
      pauses,
      heals: await events(db, ["heal"]),
      "late writes refused": await events(db, ["fence.rejected", "step.outcome-conflict"]),
    },
  };
}
