// waitForEvent's early-event rule on the real server (docs/guide/events.md, "Waiting for an
// event"; docs/sql.md, "Function set 29: waiting for an event"): many runs suspend on event waits
// while many events are published from other connections, some while the pass that reached the
// wait is still running, some before it, some while the run is parked, with events of the same
// name that match no one published all along. Every wait is answered once, by its own event.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

const RUNS = 40;
let publisher: Durable;
const inFlight: Promise<unknown>[] = [];
const jitter = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 15)));

// Even runs publish their own reply from a step, at a random moment after it (around the
// suspension); odd runs wait since the run started, for a reply the test publishes at random.
const racer = defineWorkflow({
  name: "racer",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const own = input.n % 2 === 0;
    if (own) {
      await ctx.step.run("ask", () => {
        inFlight.push(jitter().then(() => publisher.publish("reply", { to: ctx.runId }, { id: `reply-${ctx.runId}` })));
      });
    } else {
      await ctx.step.run("ask", () => "asked");
    }
    return ctx.step.waitForEvent("reply", "reply", { match: { to: ctx.runId }, ...(own ? {} : { since: "run" }) });
  },
});

let dbs: Kysely<any>[] = [];
let tickers: Durable[] = [];

beforeAll(async () => {
  const url = await createTestDatabase("durable_event_racing");
  for (let i = 0; i < 4; i++) dbs.push(await connect(url, { driver: "pg", poolSize: 3 }));
  const make = (db: Kysely<any>) =>
    createDurable({ db, workflows: [racer], secrets: { durable: "t" }, defaults: { lease: "2s" }, log: () => {} });
  publisher = make(dbs[0]!);
  tickers = dbs.slice(1).map(make);
  await publisher.migrate();
});
afterAll(async () => {
  for (const durable of [publisher, ...tickers]) await durable?.close();
  dbs = [];
  tickers = [];
});

it("every wait takes its own event once, whenever it was published", { timeout: 120_000 }, async () => {
  const ids = Array.from({ length: RUNS }, (_, n) => `r-${n}`);
  for (const [n, id] of ids.entries()) await publisher.start(racer, { n }, { id });
  let stop = false;
  const tick = async (durable: Durable) => {
    while (!stop) await durable.tick({ budgetMs: 5_000 });
  };
  const noise = async () => {
    for (let i = 0; !stop; i++) {
      await publisher.publish("reply", { to: "nobody", i }, { id: `noise-${i}` });
      await jitter();
    }
  };
  // The odd runs' replies, at random moments: before a run's first pass, during it, or after it parked.
  const replies = async () => {
    for (const id of ids.filter((_, n) => n % 2 === 1).sort(() => Math.random() - 0.5)) {
      await jitter();
      await publisher.publish("reply", { to: id }, { id: `reply-${id}` });
    }
  };
  const loops = [...tickers.map(tick), noise(), replies()];
  await until(async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from durable_runs where status = 'completed'`.execute(dbs[0]!);
    return rows[0]!.n === RUNS;
  }, 100_000);
  stop = true;
  await Promise.all([...loops, ...inFlight]);

  const { rows } = await sql<{ id: string; output: unknown; result: { eventId: string } }>`
    select r.id, r.output, s.result from durable_runs r
      join durable_steps s on s.run_id = r.id and s.step_id = 'reply' order by r.id`.execute(dbs[0]!);
  expect(rows).toHaveLength(RUNS);
  for (const row of rows) {
    expect(row.output).toEqual({ to: row.id });
    expect(row.result.eventId).toBe(`reply-${row.id}`);
  }
  const noiseCount = await sql<{ n: number }>`
    select count(*)::int as n from durable_app_events where id like 'noise-%'`.execute(dbs[0]!);
  expect(noiseCount.rows[0]!.n).toBeGreaterThan(0);
});
