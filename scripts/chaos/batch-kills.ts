// Chaos scenario 12 (docs/invariants.md): workers SIGKILLed while they hold a batch of claimed runs.
import { sql, type Kysely } from "kysely";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import type { InvariantResult } from "./invariants";
import { seeded } from "./random";
import { events, mark, ready, type Scale, type ScenarioResult, sleep, startRuns } from "./scenario-support";
import { spawnWorker } from "./workers";

/**
 * 12: workers whose ticks claim batches (TICK_CONCURRENCY 6: a tick's first claim takes a run for
 * each of its loops in one statement) SIGKILLed while they hold a batch. First each one at the
 * failpoint after its first claim, holding its whole batch, with nothing of it started; then a
 * nemesis kills busy ones while their runs execute. Every run a killed batch held is healed once
 * (its next claim counts the lost claim and logs one heal), none lost; I1–I10 check the rest.
 */
export async function killHoldingBatches(scale: Scale): Promise<ScenarioResult> {
  const batch = 6;
  const killedAtClaim = scale.full ? 12 : 4;
  const runs = scale.full ? 1_500 : 300;
  const durationMs = scale.full ? 30_000 : 10_000;
  const random = seeded(scale.seed + 12);
  const { url, db } = await createChaosDatabase("durable_chaos_batches");
  await startRuns(db, runs, () => [Math.floor(random() * 100), Math.floor(random() * 60)]);
  const env = { TICK_CONCURRENCY: String(batch) };
  const problems: string[] = [];
  const exits = await Promise.all(
    Array.from(
      { length: killedAtClaim },
      () => spawnWorker(url, { ...env, DURABLE_FAILPOINT: "claim.after:kill", IDLE_EXIT_MS: "800" }).exited,
    ),
  );
  const killed = exits.filter(({ signal, output }) => signal === "SIGKILL" && output.includes("FAILPOINT")).length;
  if (killed !== killedAtClaim)
    problems.push(`${killedAtClaim} workers to kill at their first claim, ${killed} killed`);
  // What the killed batches hold: every run claimed now (no worker is left to run one).
  const held = (
    await sql<{ id: string }>`select id from durable_runs where status = 'running' order by id`.execute(db)
  ).rows.map((r) => r.id);
  if (held.length !== killedAtClaim * batch) {
    problems.push(`${killedAtClaim} killed batches of ${batch} held ${held.length} runs`);
  }
  mark("batches killed at their claim");
  const storm = await killBusyBatches(url, { durationMs, random, env });
  mark("nemesis done, workers killed");
  problems.push(...(await drain(url, db)));
  return {
    id: "12",
    name: `workers killed holding a batch of ${batch} claimed runs (seed ${scale.seed})`,
    db,
    problems,
    counts: {
      runs,
      "workers killed at their batch's claim": killed,
      "runs their batches held": held.length,
      "workers killed while their batch ran": storm,
      heals: await events(db, ["heal"]),
    },
    invariants: (checked) => checkBatchHeals(checked, held),
  };
}

/**
 * Scenario 12's nemesis: 4 batch-claiming workers, two ticking and two in worker mode (6 loops,
 * whose idle loops are claimed for in one statement), one SIGKILLed (and replaced) every 0.3–0.8 s.
 */
async function killBusyBatches(
  url: string,
  o: { durationMs: number; random: () => number; env: Record<string, string> },
): Promise<number> {
  const envs: Record<string, string>[] = [
    { ...o.env, IDLE_EXIT_MS: String(o.durationMs + 5_000) },
    { WORK_CONCURRENCY: o.env.TICK_CONCURRENCY!, IDLE_EXIT_MS: String(o.durationMs + 5_000) },
  ];
  const spawn = (index: number) => spawnWorker(url, envs[index % 2]!);
  const workers = Array.from({ length: 4 }, (_, index) => spawn(index));
  let kills = 0;
  const end = performance.now() + o.durationMs;
  while (performance.now() < end) {
    await sleep(300 + o.random() * 500);
    const candidates = workers.flatMap((worker, index) => (ready(worker) ? [index] : []));
    if (candidates.length === 0) continue;
    const index = candidates[Math.floor(o.random() * candidates.length)]!;
    workers[index]!.child.kill("SIGKILL");
    workers[index] = spawn(index);
    kills++;
  }
  for (const w of workers) w.child.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.exited));
  return kills;
}

/**
 * Scenario 12's own invariants: each run a batch killed at its claim held ended completed, taken
 * over (a claim of it while it was running) with one heal per takeover: the worker that took it
 * over may be killed in turn by the nemesis (a reduced run here: 2 takeovers, 2 heals); over all runs,
 * every takeover logged exactly one heal (lost_claims is cleared by the next receipt, so the log
 * counts them).
 */
async function checkBatchHeals(db: Kysely<any>, held: string[]): Promise<InvariantResult[]> {
  const { rows } = await sql<{ id: string; status: string; heals: number; takeovers: number }>`
    select r.id, r.status,
           (select count(*)::int from durable_events e where e.run_id = r.id and e.kind = 'heal') as heals,
           (select count(*)::int from chaos_claims c
             where c.run_id = r.id and c.previous_status = 'running') as takeovers
      from durable_runs r order by r.id`.execute(db);
  const heldRuns = rows.filter((r) => held.includes(r.id));
  const show = (found: object[]) => found.slice(0, 5).map((r) => JSON.stringify(r));
  return [
    {
      id: "B1",
      name: "each run of a batch killed at its claim: completed, taken over, one heal per takeover",
      checked: heldRuns.length,
      violations: show(heldRuns.filter((r) => r.status !== "completed" || r.takeovers < 1 || r.heals !== r.takeovers)),
    },
    {
      id: "B2",
      name: "every takeover of a lost claim healed once (heal events = takeovers)",
      checked: rows.length,
      violations: show(rows.filter((r) => r.heals !== r.takeovers)),
    },
  ];
}
