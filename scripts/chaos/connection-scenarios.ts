// Chaos scenarios 6, 6b and 7 (docs/invariants.md): backends terminated, connections blackholed, clocks skewed.
import { sql } from "kysely";
import { startBlackholeProxy } from "./blackhole-proxy";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import { seeded } from "./random";
import { spawnWorker } from "./workers";
import { events, type Scale, type ScenarioResult, sleep, startRuns } from "./scenario-support";

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
