// Database round trips per engine operation, counted at the driver (docs/performance.md floors).
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

const statements: string[] = [];
const rt = defineWorkflow({
  name: "round-trips",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.run("call", () => 1);
    await ctx.step.tx("write", async (tx) => {
      await sql`insert into rt_effects (run_id) values (${ctx.runId})`.execute(tx);
    });
    await ctx.step.value("stamp", () => 2);
    return "done";
  },
});

let durable: Durable;
beforeAll(async () => {
  const db = await connect(await createTestDatabase("durable_round_trips"), {
    driver: "pg",
    onQuery: (q) => statements.push(q),
  });
  durable = createDurable({ db, workflows: [rt], secrets: { durable: "t" } });
  await durable.migrate();
  await sql`create table rt_effects (run_id text)`.execute(db);
});
afterAll(async () => {
  await durable?.close();
});

const kindOf = (q: string) =>
  /durable_finish_and_claim/.test(q)
    ? "finish + claim"
    : /durable_release_rate_holds/.test(q)
      ? "rate holds"
      : /min\(wake_at\)/i.test(q)
        ? "next wake"
        : /durable_claim_runs/.test(q)
          ? "claim batch"
          : /durable_claim_run/.test(q)
            ? "claim"
            : /durable_record_step/.test(q)
              ? "receipt"
              : /durable_finish_run/.test(q)
                ? "finish"
                : /^begin/i.test(q)
                  ? "begin"
                  : /^commit/i.test(q)
                    ? "commit"
                    : /rt_effects/.test(q)
                      ? "effect"
                      : q.slice(0, 30);

it("claim 1, run step 1, tx step its statement + 3, the last step, the completion and the next claim 1", async () => {
  await durable.start(rt, {}, { id: "rt-1" });
  statements.length = 0;
  expect(await durable.tick({ budgetMs: 40_000 })).toMatchObject({ claimed: 1, completed: 1 });
  expect(statements.map(kindOf)).toEqual([
    // An instance's first tick, and once a minute after: runs held under a changed rate limit
    // (docs/guide/flow-control.md); not per run, and not in the next test's tick.
    "rate holds",
    "claim", // claim + ledger load
    "receipt", // run step: one fenced receipt statement (held back until the next step starts)
    "begin",
    "effect",
    "receipt",
    "commit", // tx step: its statement + 3
    "finish + claim", // the value step's receipt and the tick's next claim (finding none) ride on the completion
    "next wake", // once per tick, not per run: the report's nextWakeAt (docs/guide/http-routes.md, "The tick report")
  ]);
});

it("a tick loop's completion claims its next run: two runs cost one claim statement in all", async () => {
  await durable.start(rt, {}, { id: "rt-chain-1" });
  await durable.start(rt, {}, { id: "rt-chain-2" });
  statements.length = 0;
  expect(await durable.tick({ budgetMs: 40_000 })).toMatchObject({ claimed: 2, completed: 2 });
  const kinds = statements.map(kindOf);
  expect(kinds.filter((k) => k === "claim")).toEqual(["claim"]);
  expect(kinds.filter((k) => k === "finish + claim")).toHaveLength(2);
  expect(kinds).toHaveLength(1 + 2 * 6 + 1); // the claim, 6 a run, the tick's one next-wake read
});

it("a tick of 4 loops claims its 4 runs in one batch statement: a claim costs 1/4 of a round trip a run", async () => {
  for (let i = 1; i <= 4; i++) await durable.start(rt, {}, { id: `rt-batch-${i}` });
  statements.length = 0;
  expect(await durable.tick({ budgetMs: 40_000, concurrency: 4 })).toMatchObject({ claimed: 4, completed: 4 });
  const kinds = statements.map(kindOf);
  expect(kinds.filter((k) => k === "claim batch")).toEqual(["claim batch"]);
  expect(kinds.filter((k) => k === "claim")).toEqual([]);
  // Each loop's completion still chains its own next claim (finding none here).
  expect(kinds.filter((k) => k === "finish + claim")).toHaveLength(4);
  expect(kinds).toHaveLength(1 + 4 * 6 + 1); // the batch, 6 a run (as above), the tick's one next-wake read
});

it("a worker's 8 idle loops woken by a burst of 8 runs claim them in one statement, burst after burst", async () => {
  const stop = new AbortController();
  statements.length = 0;
  const working = durable.work({ concurrency: 8, signal: stop.signal, pollMs: 60_000 });
  const claims = () => statements.filter((q) => /durable_claim_runs?\(/.test(q)).length;
  const completed = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from durable_runs where id like 'rt-burst-%'
      and status = 'completed'`.execute(durable.db)
    ).rows[0]!.n;
  try {
    // Each loop's first claim finds nothing: the earlier tests drained every run.
    await until(() => claims() >= 8);
    const before = claims();
    for (let burst = 0; burst < 10; burst++) {
      await durable.startMany(
        rt,
        Array.from({ length: 8 }, () => ({})),
        {
          ids: Array.from({ length: 8 }, (_, i) => `rt-burst-${burst}-${i}`),
        },
      );
      await until(async () => (await completed()) === 8 * (burst + 1));
    }
    // One batch a burst (a loop still waking from the last burst may claim once more); each
    // completion's chained claim finds nothing. Before batches, 8 loops took about 25 claims a burst.
    const batches = statements.filter((q) => /durable_claim_runs\(/.test(q)).length;
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(claims() - before).toBeLessThanOrEqual(10 + 3);
  } finally {
    stop.abort();
    await working;
  }
});

it("advance(id) of one run does not chain a claim onto its completion", async () => {
  await durable.start(rt, {}, { id: "rt-alone" });
  await durable.start(rt, {}, { id: "rt-other" });
  statements.length = 0;
  expect(await durable.advance("rt-alone")).toBe("completed");
  expect(statements.map(kindOf).at(-1)).toBe("finish");
  expect(await durable.status("rt-other")).toMatchObject({ status: "pending" });
});
