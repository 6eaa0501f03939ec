// Claims (replays of the body) until a run completes: a 5-step run with two 200 ms sleeps, with
// the sleeps waited in process and without.
import { sql } from "kysely";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable } from "../../lib/durable";
import { open, type Target } from "./databases";

const fiveSteps = defineWorkflow({
  name: "bench-five-steps-two-sleeps",
  input: z.object({ nap: z.string() }),
  async run(ctx, input) {
    await ctx.step.run("one", () => 1);
    await ctx.step.sleep("nap-1", input.nap);
    await ctx.step.run("two", () => 2);
    await ctx.step.run("three", () => 3);
    await ctx.step.sleep("nap-2", input.nap);
    await ctx.step.run("four", () => 4);
    await ctx.step.run("five", () => 5);
    return "done";
  },
});

export const REPLAY_RUNS = 5;

/** Mean claims per completed run over REPLAY_RUNS runs. */
export async function claimsPerRun(target: Target, inProcessWait: string): Promise<number> {
  const db = await open(target, "replays");
  const durable: Durable = createDurable({
    db,
    workflows: [fiveSteps],
    secrets: { durable: "bench" },
    defaults: { inProcessWait },
    log: () => {},
  });
  await durable.migrate();
  for (let i = 0; i < REPLAY_RUNS; i++) await durable.start(fiveSteps, { nap: "200ms" }, { id: `r${i}` });
  for (;;) {
    await durable.tick({ budgetMs: 40_000 });
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from durable_runs where status <> 'completed'`.execute(db);
    if (rows[0]!.n === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { rows } = await sql<{ claims: number }>`select avg(attempts)::float8 as claims from durable_runs`.execute(db);
  await durable.close();
  return rows[0]!.claims;
}
