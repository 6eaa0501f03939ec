// the chaos scenarios of docs/invariants.md on the real server. Each builds a fresh database, starts runs, lets
// workers (child processes) and a seeded nemesis loose, drains what is left, and returns its
// counts; the caller checks I1–I10 on the database it leaves (and the invariants a scenario adds).
import { sql, type Kysely } from "kysely";
import type { FailpointName } from "../../lib/durable/engine/run/failpoints";
import { createDurable } from "../../lib/durable";
import { startBlackholeProxy } from "./blackhole-proxy";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import { seeded } from "./random";
import { CHAOS_CHILDREN, chaosParent, chaosWorkflows, composeExpectation } from "./workflow";
import { checkCompositionInvariants } from "./compose-invariants";
import { spawnWorker, type Worker } from "./workers";
import { killHoldingBatches } from "./batch-kills";
import { events, mark, ready, type Scale, type ScenarioResult, sleep, startRuns } from "./scenario-support";

export type { Scale, ScenarioResult };

export const FAILPOINTS: FailpointName[] = [
  "claim.after",
  "run.before-body",
  "run.after-body",
  "run.after-receipt",
  "tx.after-effect",
  "tx.after-receipt",
  "tx.after-commit",
  "finish.before",
  "finish.after",
];

// A condition that holds costs no more for being allowed longer: a worker process takes tens of seconds to start
// on a loaded machine (20 s was not enough for scenario 4's frozen owners beside a test suite and a CPU hog).
async function until(condition: () => boolean, timeoutMs = 180_000) {
  const end = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error("chaos: condition not reached in time");
    await sleep(20);
  }
}

const unfinished = async (db: Kysely<any>) =>
  Number(
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from durable_runs where status not in ('completed', 'failed', 'cancelled')`.execute(
        db,
      )
    ).rows[0]!.n,
  );

/**
 * 1–3: SIGKILL at every failpoint (after the effect before the receipt, after COMMIT before the response…),
 * then recovery.
 */
export async function crashAtEveryFailpoint(scale: Scale): Promise<ScenarioResult> {
  const perPoint = scale.full ? 5 : 2;
  const { url, db } = await createChaosDatabase("durable_chaos_failpoints");
  await startRuns(db, FAILPOINTS.length * perPoint + 2);
  const problems: string[] = [];
  let kills = 0;
  for (let round = 0; round < perPoint; round++) {
    // One worker per failpoint at once: each claims its own run and dies at its point.
    const exits = await Promise.all(
      FAILPOINTS.map((point) => spawnWorker(url, { DURABLE_FAILPOINT: `${point}:kill`, IDLE_EXIT_MS: "800" }).exited),
    );
    exits.forEach(({ signal, output }, i) => {
      if (signal === "SIGKILL" && output.includes(`FAILPOINT ${FAILPOINTS[i]}`)) kills++;
      else problems.push(`failpoint ${FAILPOINTS[i]} was not reached (exit ${signal ?? "normal"})`);
    });
  }
  problems.push(...(await drain(url, db)));
  return {
    id: "1-3",
    name: "SIGKILL at every failpoint, then recovery",
    db,
    problems,
    counts: {
      failpoints: FAILPOINTS.length,
      kills,
      "killed between effect and receipt": perPoint,
      "killed after COMMIT": perPoint,
      heals: await events(db, ["heal"]),
    },
  };
}

/**
 * 4: concurrent workers, a nemesis that kills and pauses them past their lease; paused owners resume and are
 * refused.
 */
export async function killAndPause(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 3_000 : 300;
  const workerCount = scale.full ? 12 : 6;
  const durationMs = scale.full ? 60_000 : 12_000;
  const random = seeded(scale.seed);
  const { url, db } = await createChaosDatabase("durable_chaos_nemesis");
  // Steps long enough that the nemesis catches owners mid-step.
  await startRuns(db, runs, () => [Math.floor(random() * 150), Math.floor(random() * 60)]);
  const env = { IDLE_EXIT_MS: String(durationMs + 5_000) };
  mark("runs started");
  const workers: Worker[] = Array.from({ length: workerCount }, () => spawnWorker(url, env));
  let kills = 0;
  let pauses = 0;
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    await sleep(200 + random() * 400);
    const index = Math.floor(random() * workers.length);
    const worker = workers[index]!;
    if (worker.paused) continue;
    if (random() < 0.5) {
      worker.child.kill("SIGKILL");
      kills++;
      workers[index] = spawnWorker(url, env);
    } else {
      // Frozen past its lease (3 s budget + 0.3 s margin), then resumed: its writes must be refused.
      worker.child.kill("SIGSTOP");
      worker.paused = true;
      pauses++;
      setTimeout(
        () => {
          worker.child.kill("SIGCONT");
          worker.paused = false;
        },
        3_500 + random() * 2_000,
      );
    }
  }
  await sleep(6_000); // every paused worker has resumed
  for (const w of workers) w.child.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.exited));
  mark("nemesis done, workers killed");
  const problems = await drain(url, db);
  mark("drained");

  // Owners frozen between their deadline check and their receipt write, resumed after another
  // owner took their run over: only the fence stands between them and a stale write.
  const frozen = scale.full ? 6 : 3;
  const refusedBefore = await events(db, ["fence.rejected", "step.outcome-conflict"]);
  await startRuns(db, frozen, () => [0, 0], "frozen");
  const stopped = Array.from({ length: frozen }, () =>
    spawnWorker(url, { DURABLE_FAILPOINT: "receipt.before-write:stop", IDLE_EXIT_MS: "1000" }),
  );
  await Promise.all(stopped.map((w) => until(() => w.output().includes("FAILPOINT receipt.before-write"))));
  mark("frozen");
  await sleep(3_500); // their leases (3 s budget + 0.3 s margin) run out
  problems.push(...(await drain(url, db)));
  mark("frozen runs drained");
  for (const w of stopped) w.child.kill("SIGCONT");
  await Promise.all(stopped.map((w) => w.exited));
  const refused = (await events(db, ["fence.rejected", "step.outcome-conflict"])) - refusedBefore;
  if (refused !== frozen) problems.push(`${frozen} frozen owners resumed, ${refused} late writes refused`);
  return {
    id: "4",
    name: `${workerCount} workers, nemesis kills and pauses past the lease (seed ${scale.seed})`,
    db,
    problems,
    counts: {
      runs: runs + frozen,
      kills,
      pauses,
      heals: await events(db, ["heal"]),
      "frozen owners resumed": frozen,
      "their late writes refused": refused,
    },
  };
}

/**
 * 5: a worker frozen inside a tx step's transaction, after its effect. The fence is checked at the
 * receipt, so the frozen owner holds no lock on the run: the next owner takes over once the lease
 * runs out. The frozen one resumes past its deadline, writes no receipt, and its effect rolls back
 * (had it resumed before its deadline check, the fence would refuse the receipt: scenario 4).
 */
export async function frozenInTransaction(scale: Scale): Promise<ScenarioResult> {
  const frozen = scale.full ? 6 : 3;
  const { url, db } = await createChaosDatabase("durable_chaos_frozen_tx");
  await startRuns(db, frozen);
  const workers = Array.from({ length: frozen }, () =>
    spawnWorker(url, { DURABLE_FAILPOINT: "tx.after-effect:stop", IDLE_EXIT_MS: "1000" }),
  );
  await Promise.all(workers.map((w) => until(() => w.output().includes("FAILPOINT tx.after-effect"))));
  const idleInTransaction = async () =>
    Number(
      (
        await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`.execute(db)
      ).rows[0]!.n,
    );
  const heldOpen = await idleInTransaction();
  await sleep(3_500); // their leases run out
  const problems = await drain(url, db);
  for (const w of workers) w.child.kill("SIGCONT");
  await Promise.all(workers.map((w) => w.exited));
  if (heldOpen !== frozen)
    problems.push(`${frozen} workers frozen inside a transaction, ${heldOpen} sessions idle in transaction`);
  // The refused receipt rolls back with its transaction (its event too): the effects tell.
  const effects = Number(
    (await sql<{ n: number }>`select count(*)::int as n from chaos_effects`.execute(db)).rows[0]!.n,
  );
  if (effects !== frozen) problems.push(`${frozen} runs, ${effects} tx effects`);
  return {
    id: "5",
    name: "workers frozen inside a tx step's transaction, resumed after a takeover",
    db,
    problems,
    counts: {
      frozen,
      "open transactions while frozen": heldOpen,
      "tx effects after resume": effects,
      heals: await events(db, ["heal"]),
    },
  };
}

/** 6: pg_terminate_backend on the workers' backends while runs execute. */
export async function terminateBackends(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 2_000 : 500;
  const durationMs = scale.full ? 40_000 : 10_000;
  const random = seeded(scale.seed + 6);
  const { url, db } = await createChaosDatabase("durable_chaos_terminate");
  // Steps long enough (about 80 ms a run) that the runs outlast the storm on 4 workers.
  await startRuns(db, runs, () => [Math.floor(random() * 100), Math.floor(random() * 60)]);
  const env = { IDLE_EXIT_MS: String(durationMs + 3_000) };
  const workers = Array.from({ length: 4 }, () => spawnWorker(url, env));
  let terminated = 0;
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    await sleep(30 + random() * 120);
    const { rows } = await sql<{ ok: boolean }>`
      select pg_terminate_backend(pid) as ok from pg_stat_activity
       where datname = current_database() and application_name = 'chaos-worker'
       order by random() limit ${random() < 0.2 ? 4 : 1}`.execute(db);
    terminated += rows.filter((r) => r.ok).length;
  }
  await Promise.all(workers.map((w) => w.exited));
  const problems = await drain(url, db);
  return {
    id: "6",
    name: "pg_terminate_backend storm while runs execute",
    db,
    problems,
    counts: { runs, "backends terminated": terminated, heals: await events(db, ["heal"]) },
  };
}

/** 6: a blackholed connection, held longer than the lease and then delivered late. */
export async function blackholedConnections(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 1_500 : 400;
  const durationMs = scale.full ? 40_000 : 12_000;
  const random = seeded(scale.seed + 66);
  const { url, db } = await createChaosDatabase("durable_chaos_blackhole");
  // About 125 ms a run: the workers stay busy for the whole scenario.
  await startRuns(db, runs, () => [Math.floor(random() * 150), Math.floor(random() * 100)]);
  const proxy = await startBlackholeProxy();
  const proxied = new URL(url);
  proxied.port = String(proxy.port);
  const env = { IDLE_EXIT_MS: String(durationMs + 3_000) };
  // Two workers behind the proxy, two direct ones that take their runs over while they are held.
  const workers = [
    spawnWorker(proxied.toString(), env),
    spawnWorker(proxied.toString(), env),
    spawnWorker(url, env),
    spawnWorker(url, env),
  ];
  let held = 0;
  const end = performance.now() + durationMs;
  await sleep(3_000); // the workers are up
  while (performance.now() < end) {
    // Longer than the lease (3 s budget + 0.3 s margin): the run is someone else's by delivery.
    held += proxy.blackhole(1, 3_500 + random() * 1_500, random);
    await sleep(500 + random() * 1_000);
  }
  await sleep(5_500); // everything held has been delivered
  await Promise.all(workers.map((w) => w.exited));
  await proxy.close();
  const problems = await drain(url, db);
  return {
    id: "6b",
    name: "connections blackholed past the lease, then delivered late",
    db,
    problems,
    counts: {
      runs,
      "connections held": held,
      heals: await events(db, ["heal"]),
      "late writes refused": await events(db, ["fence.rejected", "step.outcome-conflict"]),
    },
  };
}

/** 7: app clocks skewed ±10 min per worker decide nothing: same outcome as an unskewed control. */
export async function skewedClocks(scale: Scale): Promise<ScenarioResult> {
  const runs = scale.full ? 1_000 : 200;
  const outcome = async (name: string, skews: number[]) => {
    const { url, db } = await createChaosDatabase(name);
    await startRuns(db, runs);
    await Promise.all(
      skews.map((skew) => spawnWorker(url, { CLOCK_SKEW_MS: String(skew), IDLE_EXIT_MS: "1500" }).exited),
    );
    const problems = await drain(url, db);
    const { rows } = await sql<{ completed: number; lost: number; claims: number }>`
      select (select count(*)::int from durable_runs where status = 'completed') as completed,
             (select count(*)::int from chaos_claims where previous_status = 'running') as lost,
             (select count(*)::int from chaos_claims) as claims`.execute(db);
    return { db, problems, ...rows[0]! };
  };
  const control = await outcome("durable_chaos_clock_control", [0, 0, 0, 0]);
  await control.db.destroy();
  const skewed = await outcome("durable_chaos_clock_skew", [600_000, -600_000, 600_000, -600_000]);
  const problems = [...control.problems, ...skewed.problems];
  if (skewed.completed !== control.completed || skewed.lost !== control.lost) {
    problems.push(`skewed clocks decided differently: ${JSON.stringify({ skewed, control })}`);
  }
  return {
    id: "7",
    name: "app clocks skewed ±10 min vs an unskewed control",
    db: skewed.db,
    problems,
    counts: {
      runs,
      "completed (skewed / control)": skewed.completed,
      "lost claims (skewed / control)": skewed.lost,
      "control lost claims": control.lost,
    },
  };
}

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

/**
 * One move of a nemesis: SIGKILL a worker (and start another) or freeze one past its lease; a
 * worker still starting is left alone (killed before its first tick, it would test nothing).
 */
function nemesis(workers: Worker[], random: () => number, spawn: () => Worker): "kill" | "pause" | null {
  const candidates = workers.flatMap((worker, index) => (ready(worker) ? [index] : []));
  if (candidates.length === 0) return null;
  const index = candidates[Math.floor(random() * candidates.length)]!;
  const worker = workers[index]!;
  if (worker.paused || random() < 0.5) {
    worker.child.kill("SIGKILL");
    workers[index] = spawn();
    return "kill";
  }
  // Frozen past its lease (3 s budget + 0.3 s margin), then resumed: its writes must be refused.
  worker.child.kill("SIGSTOP");
  worker.paused = true;
  setTimeout(
    () => {
      worker.child.kill("SIGCONT");
      worker.paused = false;
    },
    3_500 + random() * 2_000,
  );
  return "pause";
}

/** By docs/invariants.md scenario number (2 and 3 are failpoints of 1). */
export const SCENARIOS: ReadonlyArray<[string, (scale: Scale) => Promise<ScenarioResult>]> = [
  ["1-3", crashAtEveryFailpoint],
  ["4", killAndPause],
  ["5", frozenInTransaction],
  ["6", terminateBackends],
  ["6b", blackholedConnections],
  ["7", skewedClocks],
  ["8", budgets],
  ["9", load],
  ["10", fanOut],
  ["11", parentsAndChildren],
  ["12", killHoldingBatches],
];
