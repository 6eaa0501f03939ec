// Racing publishers on the real server (docs/guide/events.md, "Publishing"): several connections
// publish the same event id while the first holds it in an app transaction that then commits or
// rolls back; exactly one event is stored, each subscriber has exactly one run, and every
// publisher that succeeded is answered the same runs.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { until } from "../helpers/until";

const workflows = ["a", "b", "c"].map((name) =>
  defineWorkflow({ name: `sub-${name}`, on: "race.event", input: z.object({ n: z.number() }), run: async () => name }),
);
const PUBLISHERS = 4;
const ROUNDS = 15;

let dbs: Kysely<any>[] = [];
let instances: Durable[] = [];

beforeAll(async () => {
  const url = await createTestDatabase("durable_publish_racing");
  for (let i = 0; i < PUBLISHERS; i++) {
    const db = await connect(url, { driver: "pg", poolSize: 3 });
    dbs.push(db);
    instances.push(createDurable({ db, workflows, secrets: { durable: "t" }, log: () => {} }));
  }
  await instances[0]!.migrate();
});
afterAll(async () => {
  for (const durable of instances) await durable.close();
  dbs = [];
  instances = [];
});

it("publishers racing on one id: one event, one run per subscriber, the same answer to each", async () => {
  const db = dbs[0]!;
  for (let round = 0; round < ROUNDS; round++) {
    const id = `evt-${round}`;
    const commits = round % 2 === 0;
    // The first publisher holds the id in an open transaction while the others publish it too
    // (each then waits on the event's key); it commits or rolls back once all of them wait.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = db.transaction().execute(async (tx) => {
      const answer = await instances[0]!.publish("race.event", { n: 0 }, { id, tx });
      held();
      await released;
      if (!commits) throw new Error("rolled back");
      return answer;
    });
    await holding;
    const racers = instances.slice(1).map((durable, n) => durable.publish("race.event", { n: n + 1 }, { id }));
    await until(async () => (await lockWaiters(db)) >= PUBLISHERS - 1);
    release();
    const answers = await Promise.allSettled([holder, ...racers]);
    expect(answers[0]!.status).toBe(commits ? "fulfilled" : "rejected");
    const expected = {
      eventId: id,
      runs: ["a", "b", "c"].map((name) => ({ workflow: `sub-${name}`, id: `event:sub-${name}/${id}` })),
    };
    for (const answer of answers.slice(commits ? 0 : 1)) {
      expect(answer.status).toBe("fulfilled");
      expect((answer as PromiseFulfilledResult<unknown>).value).toEqual(expected);
    }
    const stored = await sql<{ events: number; runs: number; data: number }>`
      select (select count(*)::int from durable_app_events where id = ${id}) as events,
             (select (data ->> 'n')::int from durable_app_events where id = ${id}) as data,
             (select count(*)::int from durable_runs where id like ${`event:%/${id}`}) as runs`.execute(db);
    expect(stored.rows[0]).toMatchObject({ events: 1, runs: 3 });
    // Committed: the holder's event; rolled back: one of the racers' (which one is the server's pick).
    if (commits) expect(stored.rows[0]!.data).toBe(0);
    else expect(stored.rows[0]!.data).toBeGreaterThan(0);
  }
});

/** Backends of this database waiting for a lock (the racers, behind the holder's uncommitted event). */
async function lockWaiters(db: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
  return rows[0]!.n;
}
