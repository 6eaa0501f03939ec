// The singleton key passes to the successor with no window (docs/guide/continue-as-new.md, "What
// the successor keeps"), on the real server: while a chain of runs continues link after link,
// other connections keep starting runs of the same key, and none is ever started.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable, RunStateConflictError } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";

const LINKS = 40;
const looping = defineWorkflow({
  name: "looping",
  input: z.object({ key: z.string(), n: z.number() }),
  singleton: { key: (input: { key: string }) => input.key },
  async run(ctx, input) {
    if (input.n < LINKS) {
      await ctx.step.value("n", () => input.n);
      return ctx.continueAsNew({ key: input.key, n: input.n + 1 });
    }
    await ctx.step.waitForSignal("stop");
    return "stopped";
  },
});

let url: string;
let db: Kysely<any>;
let durable: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_continue_racing");
  db = await connect(url, { driver: "pg", poolSize: 4 });
  durable = createDurable({ db, workflows: [looping], secrets: { durable: "t" }, log: () => {} });
  await durable.migrate();
});
afterAll(async () => {
  await durable?.close();
});

it("a start racing a chain's links never takes its singleton key", async () => {
  await durable.start(looping, { key: "k", n: 0 }, { id: "loop" });
  const intruders = [1, 2].map(async (lane) => {
    const db2 = await connect(url, { driver: "pg", poolSize: 1 });
    const other = createDurable({ db: db2, workflows: [looping], secrets: { durable: "t" }, log: () => {} });
    const refusals = new Set<string>();
    let tries = 0;
    try {
      for (; (await other.status(`loop~${LINKS}`))?.status !== "waiting"; tries++) {
        const answer = await other.start(looping, { key: "k", n: 99 }, { id: `intruder-${lane}-${tries}` }).then(
          (result) => `started ${result.id}`,
          (error) => (RunStateConflictError.is(error) ? `held by ${error.activeRunId ?? "?"}` : `error ${error}`),
        );
        refusals.add(answer.startsWith("held by") ? "held" : answer);
      }
    } finally {
      await other.close();
    }
    return { tries, refusals: [...refusals] };
  });
  for (let i = 0; i < LINKS * 2 && (await durable.status(`loop~${LINKS}`))?.status !== "waiting"; i++) {
    await durable.tick({ budgetMs: 40_000 });
  }
  const lanes = await Promise.all(intruders);
  for (const lane of lanes) expect(lane.refusals).toEqual(["held"]);
  expect(lanes.reduce((sum, lane) => sum + lane.tries, 0)).toBeGreaterThan(LINKS);
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from durable_runs
     where singleton_key = 'k' and status in ('pending', 'running', 'waiting')`.execute(db);
  expect(rows[0]!.n).toBe(1);
  const started = await sql<{
    n: number;
  }>`select count(*)::int as n from durable_runs where id like 'intruder-%'`.execute(db);
  expect(started.rows[0]!.n).toBe(0);
});
