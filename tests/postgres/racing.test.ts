// Eight independent instances (own pools, like eight function instances) drain 200 runs at once.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";

const executions = new Map<string, number>();
const bump = (key: string) => executions.set(key, (executions.get(key) ?? 0) + 1);

const order = defineWorkflow({
  name: "race-order",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const price = await ctx.step.run("price", () => {
      bump(`${ctx.runId}:price`);
      return input.n * 10;
    });
    await ctx.step.tx("reserve", async (tx) => {
      bump(`${ctx.runId}:reserve`);
      await sql`insert into race_effects (run_id, amount) values (${ctx.runId}, ${price})`.execute(tx);
    });
    const id = await ctx.step.value("receipt-id", () => `${ctx.runId}-${Math.random()}`);
    return { price, id };
  },
});

const RUNS = 200;
const LOOPS = 8;
let url: string;
let admin: Kysely<any>;

beforeAll(async () => {
  url = await createTestDatabase("durable_racing");
  admin = await connect(url, { driver: "pg" });
  const setup = createDurable({ db: admin, workflows: [order], secrets: { durable: "t" } });
  await setup.migrate();
  await sql`create table race_effects (run_id text not null, amount int not null)`.execute(admin);
  for (let i = 0; i < RUNS; i++) await setup.start(order, { n: i }, { id: `run-${i}` });
});
afterAll(async () => {
  await admin?.destroy();
});

it(`${LOOPS} racing tick loops complete ${RUNS} runs with every step and every tx effect exactly once`, async () => {
  const instances: Durable[] = [];
  for (let i = 0; i < LOOPS; i++) {
    instances.push(
      createDurable({
        db: await connect(url, { driver: "pg", poolSize: 2 }),
        workflows: [order],
        secrets: { durable: "t" },
      }),
    );
  }
  const claimedBy = await Promise.all(
    instances.map(async (durable) => {
      let claimed = 0;
      for (;;) {
        const report = await durable.tick({ budgetMs: 40_000 });
        claimed += report.claimed;
        if (report.claimed === 0) return claimed;
      }
    }),
  );
  await Promise.all(instances.map((d) => d.close()));

  expect(claimedBy.reduce((a, b) => a + b, 0)).toBe(RUNS);
  // More than one loop did real work: the claims interleaved.
  expect(claimedBy.filter((n) => n > 0).length).toBeGreaterThan(1);
  const runs = await sql<{
    status: string;
    n: number;
  }>`select status, count(*)::int as n from durable_runs group by status`.execute(admin);
  expect(runs.rows).toEqual([{ status: "completed", n: RUNS }]);
  const receipts = await sql<{
    n: number;
  }>`select count(*)::int as n from durable_steps where status = 'completed'`.execute(admin);
  expect(receipts.rows[0]!.n).toBe(RUNS * 3);
  const effects = await sql<{
    run_id: string;
    n: number;
  }>`select run_id, count(*)::int as n from race_effects group by run_id having count(*) <> 1`.execute(admin);
  expect(effects.rows).toEqual([]);
  expect((await sql<{ n: number }>`select count(*)::int as n from race_effects`.execute(admin)).rows[0]!.n).toBe(RUNS);
  for (let i = 0; i < RUNS; i++) {
    expect(executions.get(`run-${i}:price`)).toBe(1);
    expect(executions.get(`run-${i}:reserve`)).toBe(1);
  }
  const rejected = await sql<{
    n: number;
  }>`select count(*)::int as n from durable_events where kind = 'fence.rejected'`.execute(admin);
  expect(rejected.rows[0]!.n).toBe(0);
});
