// Flow control on the real server under 8 racing tick loops (independent instances with their own
// pools, as in tests/postgres/racing.test.ts): a rate limit holds over steady starts, counted in the
// database by first-claim time; a burst of debounced starts makes one run; priorities are claimed in
// order. The database clock moves with durable.testing.advanceClock, so 40 s of starts take seconds.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

const LOOPS = 8;
const executions = new Map<string, number>();
const bump = (key: string) => executions.set(key, (executions.get(key) ?? 0) + 1);

const steady = defineWorkflow({
  name: "fc-steady",
  input: z.object({ n: z.number() }),
  rateLimit: { key: () => "partner", limit: 5, period: "1s" },
  async run(ctx, input) {
    await ctx.step.run("call", () => bump(`${ctx.runId}:call`));
    return input.n;
  },
});

const burst = defineWorkflow({
  name: "fc-burst",
  input: z.object({ doc: z.string(), text: z.string() }),
  debounce: { key: (input) => input.doc, period: "2s" },
  async run(_ctx, input) {
    bump(`burst:${input.text}`);
    return input.text;
  },
});

const ranked = defineWorkflow({
  name: "fc-ranked",
  input: z.object({ n: z.number(), p: z.number() }),
  priority: (input) => input.p,
  async run(ctx, input) {
    await ctx.step.run("work", () => bump(`${ctx.runId}:work`));
    return input.n;
  },
});

const backlog = defineWorkflow({
  name: "fc-backlog",
  input: z.object({ n: z.number() }),
  rateLimit: { key: () => "partner", limit: 5, period: "1h" },
  async run(ctx, input) {
    await ctx.step.run("call", () => bump(`${ctx.runId}:call`));
    return input.n;
  },
});

const free = defineWorkflow({
  name: "fc-free",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    await ctx.step.run("call", () => bump(`${ctx.runId}:call`));
    return input.n;
  },
});

const workflows = [steady, burst, ranked, backlog, free];
let url: string;
let admin: Kysely<any>;
let control: Durable;
const instances: Durable[] = [];

beforeAll(async () => {
  url = await createTestDatabase("durable_flow_racing");
  admin = await connect(url, { driver: "pg" });
  control = createDurable({ db: admin, workflows, secrets: { durable: "t" } });
  await control.migrate();
  for (let i = 0; i < LOOPS; i++) {
    instances.push(
      createDurable({ db: await connect(url, { driver: "pg", poolSize: 2 }), workflows, secrets: { durable: "t" } }),
    );
  }
});
afterAll(async () => {
  await Promise.all(instances.map((d) => d.close()));
  await admin?.destroy();
});

/** Runs the 8 tick loops until `stop()`; answers how many runs each claimed. */
function raceLoops() {
  let stopped = false;
  const done = Promise.all(
    instances.map(async (durable) => {
      let claimed = 0;
      while (!stopped) {
        const report = await durable.tick();
        claimed += report.claimed;
        if (report.claimed === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      return claimed;
    }),
  );
  return {
    stop: async () => {
      stopped = true;
      return done;
    },
  };
}

const one = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(admin)).rows[0]!;
const dueNow = async (workflow: string) =>
  (
    await one<{ n: number }>(sql`select count(*)::int as n from durable_runs
      where workflow = ${workflow} and status in ('pending', 'running', 'waiting') and wake_at <= durable_now()`)
  ).n;

describe(`${LOOPS} racing tick loops`, () => {
  it("a rate limit of 5 per second holds over 20 s of steady starts at twice the rate, and drops nothing", async () => {
    const loops = raceLoops();
    const clock = async () => (await one<{ now: Date }>(sql`select durable_now() as now`)).now.getTime();
    const began = await clock();
    let n = 0;
    // 20 s of starts, 2 every 200 ms of database time: 10 a second against a limit of 5.
    for (let tick = 0; tick < 100; tick++) {
      await control.start(steady, { n: n++ });
      await control.start(steady, { n: n++ });
      await until(async () => (await dueNow("fc-steady")) === 0);
      await control.testing.advanceClock("200ms");
    }
    // Database time, so the real seconds the loop took count too (20 s moved, plus those).
    const spanS = ((await clock()) - began) / 1000;
    const startedDuringStarts = await one<{ n: number }>(
      sql`select count(*)::int as n from durable_runs where workflow = 'fc-steady' and first_claimed_at is not null`,
    );
    // Then the backlog drains at the rate, a window at a time.
    for (let window = 0; window < 200; window++) {
      const left = await one<{ n: number }>(
        sql`select count(*)::int as n from durable_runs where workflow = 'fc-steady' and status <> 'completed'`,
      );
      if (left.n === 0) break;
      await until(async () => (await dueNow("fc-steady")) === 0);
      await control.testing.advanceClock("200ms");
    }
    const claimedBy = await loops.stop();
    expect(claimedBy.filter((c) => c > 0).length).toBeGreaterThan(1);

    const status = await one<{ completed: number; all: number }>(sql`
      select count(*) filter (where status = 'completed')::int as completed, count(*)::int as "all"
        from durable_runs where workflow = 'fc-steady'`);
    expect(status).toEqual({ completed: 200, all: 200 });
    // In any second (by first-claim time, the database's), at most 5 started; and the limit was
    // reached, not undershot: near 5 a second started while the starts went on (10 a second
    // arrived). Not quite 5: the window slides from each start's own time, and here a start comes
    // up to one 200 ms step after its slot, as the clock moves in steps.
    const most = await one<{ most: number }>(sql`
      select max(n)::int as most from (
        select (select count(*) from durable_runs b where b.workflow = a.workflow
                   and b.first_claimed_at >= a.first_claimed_at
                   and b.first_claimed_at < a.first_claimed_at + interval '1 second') as n
          from durable_runs a where a.workflow = 'fc-steady') w`);
    expect(most.most).toBe(5);
    expect(spanS).toBeGreaterThanOrEqual(20);
    expect(startedDuringStarts.n).toBeGreaterThanOrEqual(Math.floor(0.85 * 5 * spanS));
    expect(startedDuringStarts.n).toBeLessThanOrEqual(Math.ceil(5 * spanS) + 5);
    const runs = await admin.selectFrom("durable_runs").select("id").where("workflow", "=", "fc-steady").execute();
    for (const run of runs) expect(executions.get(`${run.id}:call`)).toBe(1);
  });

  it("one racing tick of each loop holds a 300-run rate-held backlog and claims the 20 due behind it", async () => {
    await control.startMany(
      backlog,
      Array.from({ length: 300 }, (_, n) => ({ n })),
    );
    await control.startMany(
      free,
      Array.from({ length: 20 }, (_, n) => ({ n })),
    );
    // One tick each, at once: before 0012 a claim gave up after holding 20 runs and ended its tick,
    // so 8 ticks held 160 of the backlog and never reached the other workflow's runs.
    const reports = await Promise.all(instances.map((durable) => durable.tick()));
    const claimed = reports.reduce((sum, report) => sum + report.claimed, 0);
    const counts = await one<{ free: number; started: number; held: number; due: number; all: number }>(sql`
      select count(*) filter (where workflow = 'fc-free' and status = 'completed')::int as free,
             count(*) filter (where workflow = 'fc-backlog' and first_claimed_at is not null)::int as started,
             count(*) filter (where workflow = 'fc-backlog' and status = 'pending' and rate_slot_at is not null)::int
               as held,
             count(*) filter (where workflow = 'fc-backlog' and wake_at <= durable_now())::int as due,
             count(*) filter (where workflow = 'fc-backlog')::int as "all"
        from durable_runs where workflow in ('fc-free', 'fc-backlog')`);
    expect(counts).toEqual({ free: 20, started: 5, held: 295, due: 0, all: 300 });
    expect(claimed).toBe(25);
    // Held by racing claimers, the slots still keep the limit: at most 5 starts or slots in any hour.
    const most = await one<{ most: number }>(sql`
      with t as (select coalesce(first_claimed_at, rate_slot_at) as at from durable_runs where workflow = 'fc-backlog')
      select max((select count(*) from t b where b.at >= a.at and b.at < a.at + interval '1 hour'))::int as most
        from t a`);
    expect(most.most).toBe(5);
    const runs = await admin.selectFrom("durable_runs").select("id").where("workflow", "=", "fc-free").execute();
    for (const run of runs) expect(executions.get(`${run.id}:call`)).toBe(1);
  });

  it("a burst of 50 debounced starts within the period makes one run, with the last input", async () => {
    const loops = raceLoops();
    const racing = await Promise.all(
      Array.from({ length: 49 }, (_, i) => instances[i % LOOPS]!.start(burst, { doc: "doc-1", text: `t${i}` })),
    );
    const last = await instances[0]!.start(burst, { doc: "doc-1", text: "last" });
    const all = [...racing, last];
    expect(new Set(all.map((r) => r.id)).size).toBe(1);
    expect(all.filter((r) => r.created)).toHaveLength(1);
    expect(all.filter((r) => r.debounced)).toHaveLength(49);
    await control.testing.advanceClock("2s");
    await until(async () => (await control.status(last.id))?.status === "completed");
    await loops.stop();
    expect((await control.status(last.id))?.output).toBe("last");
    const runs = await one<{ n: number }>(sql`select count(*)::int as n from durable_runs where workflow = 'fc-burst'`);
    expect(runs.n).toBe(1);
    expect([...executions.keys()].filter((k) => k.startsWith("burst:"))).toEqual(["burst:last"]);
  });

  it("claims 200 due runs of 10 priorities in priority order, each once", async () => {
    const priorities = Array.from({ length: 200 }, (_, n) => (n * 7) % 10);
    await control.startMany(
      ranked,
      priorities.map((p, n) => ({ n, p })),
    );
    const loops = raceLoops();
    await until(async () => (await dueNow("fc-ranked")) === 0);
    await until(
      async () =>
        (
          await one<{ n: number }>(sql`select count(*)::int as n from durable_runs
          where workflow = 'fc-ranked' and status = 'completed'`)
        ).n === 200,
    );
    await loops.stop();
    // A claim reads the clock before it picks, so under load a claimer can be stopped between the
    // two while others claim many runs: first-claim times only approximate the order of the picks.
    // What holds whatever the scheduling: when a run was claimed, every free due run of a higher
    // priority was being claimed at that instant by another claimer, so no higher-priority run's
    // claim can begin after a lower-priority run has ended (its end is after its pick).
    const order = (
      await sql<{ priority: number; id: string; claimed: Date; ended: Date }>`
        select priority, id, first_claimed_at as claimed, updated_at as ended
        from durable_runs where workflow = 'fc-ranked' order by first_claimed_at, id`.execute(admin)
    ).rows;
    for (const run of order) {
      const inverted = order.filter((r) => r.priority > run.priority && r.claimed.getTime() > run.ended.getTime());
      expect(inverted.map((r) => r.id)).toEqual([]);
    }
    for (const run of order) expect(executions.get(`${run.id}:work`)).toBe(1);
  });
});
