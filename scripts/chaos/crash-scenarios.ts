// Chaos scenarios 1–5 (docs/invariants.md): workers killed at every failpoint, killed and frozen by a
// nemesis, and frozen inside a transaction.
import { sql } from "kysely";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import { seeded } from "./random";
import { spawnWorker, type Worker } from "./workers";
import { events, mark, type Scale, type ScenarioResult, sleep, startRuns } from "./scenario-support";
import { until } from "./scenario-waits";
import { CRASH_POINTS } from "./crash-points";

/**
 * 1–3: SIGKILL at every failpoint (after the effect before the receipt, after COMMIT before the response…),
 * then recovery.
 */
export async function crashAtEveryFailpoint(scale: Scale): Promise<ScenarioResult> {
  const perPoint = scale.full ? 5 : 2;
  const { url, db } = await createChaosDatabase("durable_chaos_failpoints");
  await startRuns(db, CRASH_POINTS.length * perPoint + 2);
  const problems: string[] = [];
  let kills = 0;
  for (let round = 0; round < perPoint; round++) {
    // One worker per failpoint at once: each claims its own run and dies at its point.
    const exits = await Promise.all(
      CRASH_POINTS.map((point) => spawnWorker(url, { DURABLE_FAILPOINT: `${point}:kill`, IDLE_EXIT_MS: "800" }).exited),
    );
    exits.forEach(({ signal, output }, i) => {
      if (signal === "SIGKILL" && output.includes(`FAILPOINT ${CRASH_POINTS[i]}`)) kills++;
      else problems.push(`failpoint ${CRASH_POINTS[i]} was not reached (exit ${signal ?? "normal"})`);
    });
  }
  problems.push(...(await drain(url, db)));
  return {
    id: "1-3",
    name: "SIGKILL at every failpoint, then recovery",
    db,
    problems,
    counts: {
      failpoints: CRASH_POINTS.length,
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
export async function killAndPause(
  scale: Scale,
  variant: { id: string; database: string; label: string } = { id: "4", database: "durable_chaos_nemesis", label: "" },
): Promise<ScenarioResult> {
  const runs = scale.full ? 3_000 : 300;
  const workerCount = scale.full ? 12 : 6;
  const durationMs = scale.full ? 60_000 : 12_000;
  const random = seeded(scale.seed);
  const { url, db } = await createChaosDatabase(variant.database);
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
    id: variant.id,
    name: `${variant.label}${workerCount} workers, nemesis kills and pauses past the lease (seed ${scale.seed})`,
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
