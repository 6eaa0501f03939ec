// Scaling out on the real server, with several instances on their own pools as separate
// invocations would be: fan-out never advances a run twice at once, concurrency limits hold under
// 8 racing tick loops, a singleton key admits one of 8 racing starts, and a SIGTERMed worker
// leaves no run leased.
import { spawn } from "node:child_process";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow, RunStateConflictError } from "@/lib/durable";
import { createDurableRoutes, type DurableRoutes } from "@/lib/durable/next";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";
import { effects, fiveSteps } from "./fixtures/term-workflow";

const SECRETS = { durable: "scale-durable-secret", cron: "scale-cron-secret" };

/** Per run: bodies executing now, bodies ever run, and runs seen executing twice at once. */
const executing = new Map<string, number>();
const executed = new Map<string, number>();
const overlaps: string[] = [];
/** Per concurrency key: bodies executing now and the most at once. */
const perKey = new Map<string, number>();
const perKeyMax = new Map<string, number>();

const tracked = defineWorkflow({
  name: "tracked",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("work", async () => {
      const now = (executing.get(ctx.runId) ?? 0) + 1;
      executing.set(ctx.runId, now);
      if (now > 1) overlaps.push(ctx.runId);
      executed.set(ctx.runId, (executed.get(ctx.runId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      executing.set(ctx.runId, executing.get(ctx.runId)! - 1);
      return 1;
    });
  },
});

const keyed = defineWorkflow({
  name: "keyed",
  input: z.object({ tenant: z.string() }),
  concurrency: { key: (input) => input.tenant, limit: 2 },
  async run(ctx, input) {
    for (const id of ["one", "two"]) {
      await ctx.step.run(id, async () => {
        const now = (perKey.get(input.tenant) ?? 0) + 1;
        perKey.set(input.tenant, now);
        perKeyMax.set(input.tenant, Math.max(perKeyMax.get(input.tenant) ?? 0, now));
        await new Promise((resolve) => setTimeout(resolve, 25));
        perKey.set(input.tenant, perKey.get(input.tenant)! - 1);
      });
    }
  },
});

const deploy = defineWorkflow({
  name: "deploy",
  input: z.object({ branch: z.string(), n: z.number() }),
  singleton: { key: (input) => input.branch },
  async run(ctx) {
    await ctx.step.sleep("hold", "1h");
  },
});

let url: string;
let admin: Kysely<any>;
/** Eight instances on pools of their own: eight invocations. */
const instances: Durable[] = [];

beforeAll(async () => {
  url = await createTestDatabase("durable_scale_racing");
  admin = await connect(url, { driver: "pg", poolSize: 4 });
  for (let i = 0; i < 8; i++) {
    instances.push(
      createDurable({
        db: await connect(url, { driver: "pg", poolSize: 4 }),
        workflows: [tracked, keyed, deploy, fiveSteps],
        tickConcurrency: 8,
        secrets: SECRETS,
      }),
    );
  }
  await instances[0]!.migrate();
  await sql`create table if not exists term_effects (run_id text not null, step int not null)`.execute(admin);
});
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.close()));
  await admin?.destroy();
});
beforeEach(() => resetDurableTables(admin));

const tickRequest = () =>
  new Request("http://app.test/api/durable/tick", { headers: { authorization: `Bearer ${SECRETS.cron}` } });

describe("fan-out on the real server", () => {
  it("five invocations drain 300 runs: no run advanced twice at once, each step run once", async () => {
    const reports: { fannedOut: number; claimed: number }[] = [];
    // Invocation 0 is the cron's; its fan-out calls land on invocations 1–4, round robin.
    let next = 0;
    const routes: DurableRoutes[] = instances.slice(0, 5).map((instance, i) =>
      createDurableRoutes(async () => instance, {
        secrets: SECRETS,
        maxFanOut: i === 0 ? 4 : 0,
        fetch: async (request) => {
          const target = routes[1 + (next++ % 4)]!;
          const response = await target.tick.GET(request);
          reports.push(await response.clone().json());
          return response;
        },
      }),
    );
    for (let n = 0; n < 300; n++) await instances[0]!.start(tracked, {}, { id: `fan-${n}` });
    let rounds = 0;
    while ((await instances[0]!.countDue()) > 0 && rounds++ < 20) {
      const first = await (await routes[0]!.tick.GET(tickRequest())).json();
      reports.push(first);
      await routes[0]!.idle();
    }
    expect(overlaps).toEqual([]);
    expect(executed.size).toBe(300);
    expect([...executed.values()].every((count) => count === 1)).toBe(true);
    const { rows } = await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from durable_runs group by status`.execute(admin);
    expect(rows).toEqual([{ status: "completed", n: 300 }]);
    // The first tick saw 300 due runs: it called all four others, and they called none.
    expect(reports.some((report) => report.fannedOut === 4)).toBe(true);
    expect(reports.filter((report) => report.fannedOut > 0).every((report) => report.fannedOut <= 4)).toBe(true);
    expect(reports.reduce((sum, report) => sum + report.claimed, 0)).toBe(300);
  });

  it("a fanned-out tick (hop 1) does not fan out again; another hop is refused", async () => {
    for (let n = 0; n < 40; n++) await instances[0]!.start(tracked, {}, { id: `hop-${n}` });
    const calls: Request[] = [];
    const routes = createDurableRoutes(async () => instances[1]!, {
      secrets: SECRETS,
      maxFanOut: 4,
      fetch: async (request) => {
        calls.push(request);
        return new Response("{}");
      },
    });
    const hop1 = new Request("http://app.test/api/durable/tick", {
      headers: { authorization: `Bearer ${SECRETS.cron}`, "x-durable-hop": "1" },
    });
    expect(await (await routes.tick.GET(hop1)).json()).toMatchObject({ fannedOut: 0, claimed: 40 });
    expect(calls).toHaveLength(0);
    const hop2 = new Request("http://app.test/api/durable/tick", {
      headers: { authorization: `Bearer ${SECRETS.cron}`, "x-durable-hop": "2" },
    });
    const refused = await routes.tick.GET(hop2);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.code).toBe("invalid_hop");
  });
});

describe("concurrency keys under racing claimers", () => {
  it("8 racing tick loops never run more than the limit of one key at once, and do reach it", async () => {
    const tenants = ["a", "b", "c"];
    for (let n = 0; n < 60; n++) {
      await instances[0]!.start(keyed, { tenant: tenants[n % 3]! }, { id: `keyed-${n}` });
    }
    // What the database says is executing, sampled while the loops race.
    let sampling = true;
    let dbMax = 0;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from durable_runs
           where workflow = 'keyed' and status = 'running' and lease_until > durable_now()
           group by concurrency_key order by 1 desc limit 1`.execute(admin);
        dbMax = Math.max(dbMax, rows[0]?.n ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    await Promise.all(
      instances.map(async (instance) => {
        while ((await instance.countDue()) > 0) {
          const report = await instance.tick({ budgetMs: 40_000, concurrency: 4 });
          if (report.claimed === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }),
    );
    sampling = false;
    await sampler;
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from durable_runs where workflow = 'keyed' and status = 'completed'`.execute(admin);
    expect(rows[0]!.n).toBe(60);
    expect(Object.fromEntries(perKeyMax)).toEqual({ a: 2, b: 2, c: 2 });
    expect(dbMax).toBe(2);
  });
});

describe("singletons under racing starts", () => {
  it("of 8 racing starts of one key, one creates the run; 7 are refused naming it", async () => {
    for (let round = 0; round < 5; round++) {
      const results = await Promise.allSettled(
        instances.map((instance, i) =>
          instance.start(deploy, { branch: `b-${round}`, n: i }, { id: `deploy-${round}-${i}` }),
        ),
      );
      const created = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      expect(created).toHaveLength(1);
      const winner = (created[0] as PromiseFulfilledResult<{ id: string }>).value.id;
      expect(refused).toHaveLength(7);
      for (const { reason } of refused) {
        expect(RunStateConflictError.is(reason)).toBe(true);
        expect(reason.activeRunId).toBe(winner);
      }
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from durable_runs`.execute(admin);
    expect(rows[0]!.n).toBe(5);
  });
});

describe("worker mode stopped by SIGTERM", () => {
  it("gives back every run it held: none stays leased, and a new worker finishes them, each step once", async () => {
    await sql`truncate term_effects`.execute(admin);
    for (let n = 0; n < 8; n++) await instances[0]!.start(fiveSteps, {}, { id: `term-${n}` });
    const child = spawn(process.execPath, ["--import", "tsx", "tests/postgres/fixtures/term-worker.ts"], {
      env: { ...process.env, WORKER_DATABASE_URL: url },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Mid-run: some steps have run, no run is done.
    await until(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from term_effects`.execute(admin);
      return rows[0]!.n >= 6;
    }, 20_000);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(output).toContain("STOPPED");
    const report = JSON.parse(output.split("STOPPED ")[1]!);
    expect(report.listening).toBe(true);
    expect(report.yielded).toBeGreaterThan(0);
    const { rows: leased } = await sql<{ n: number }>`
      select count(*)::int as n from durable_runs where status = 'running' or lease_until is not null`.execute(admin);
    expect(leased[0]!.n).toBe(0);

    effects.db = admin;
    const stop = new AbortController();
    const working = instances[2]!.work({ concurrency: 8, signal: stop.signal });
    await until(async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from durable_runs where status = 'completed'`.execute(admin);
      return rows[0]!.n === 8;
    }, 30_000);
    stop.abort();
    await working;
    const { rows } = await sql<{ n: number; distinct: number }>`
      select count(*)::int as n, count(distinct (run_id, step))::int as distinct from term_effects`.execute(admin);
    expect(rows[0]).toEqual({ n: 40, distinct: 40 });
  });
});
