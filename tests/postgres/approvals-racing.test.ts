// Approvals decided by people racing on the real server (docs/guide/approvals.md; docs/sql.md,
// "durable_decide_approval"): decisions sent at once from separate instances, each on its own
// pool, complete each wait exactly once. With quorum 1 one decision wins and every other is a 409;
// with quorum 2, of three approvers one is recorded, one completes, and the third is a 409; the
// run then resumes with the winner's decision, and its receipt names that actor.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import {
  approvalDecision,
  connect,
  createDurable,
  type DecideResult,
  type Durable,
  defineWorkflow,
  RunStateConflictError,
} from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";

const single = defineWorkflow({
  name: "race-single",
  input: z.object({ n: z.number() }),
  signals: { approve: approvalDecision },
  approvals: { approve: true },
  async run(ctx) {
    return ctx.step.waitForSignal("approve");
  },
});

const pair = defineWorkflow({
  name: "race-pair",
  input: z.object({ n: z.number() }),
  signals: { approve: approvalDecision },
  approvals: { approve: { quorum: 2 } },
  async run(ctx) {
    return ctx.step.waitForSignal("approve");
  },
});

const RUNS = 40;
const ACTORS = ["ann", "bob", "cat", "dan"];
let url: string;
let admin: Kysely<any>;
let setup: Durable;
const deciders: Durable[] = [];

beforeAll(async () => {
  url = await createTestDatabase("durable_approvals_racing");
  admin = await connect(url, { driver: "pg" });
  setup = createDurable({ db: admin, workflows: [single, pair], log: () => {} });
  await setup.migrate();
  for (const _ of ACTORS) {
    deciders.push(
      createDurable({ db: await connect(url, { driver: "pg" }), workflows: [single, pair], log: () => {} }),
    );
  }
});
afterAll(async () => {
  for (const durable of deciders) {
    await durable.close();
    await durable.db.destroy();
  }
  await setup?.close();
  await admin?.destroy();
});

/** Every actor decides run `id` at once, each from its own instance; answers each outcome. */
async function race(id: string, actors: string[]): Promise<(DecideResult | "conflict")[]> {
  return Promise.all(
    actors.map((actor, i) =>
      deciders[i]!.decide({ runId: id, name: "approve", actor, approved: true, reason: `by ${actor}` }).catch((e) => {
        if (RunStateConflictError.is(e)) return "conflict" as const;
        throw e;
      }),
    ),
  );
}

async function startWaiting(workflow: typeof single, prefix: string): Promise<string[]> {
  const ids = Array.from({ length: RUNS }, (_, n) => `${prefix}-${n}`);
  for (const [n, id] of ids.entries()) await setup.start(workflow, { n }, { id });
  await Promise.all(ids.map((id) => setup.advance(id)));
  const waiting = await sql<any>`select count(*)::int as n from durable_runs where status = 'waiting'
                                   and id like ${`${prefix}-%`}`.execute(admin);
  expect(waiting.rows[0].n).toBe(RUNS);
  return ids;
}

it("quorum 1: of four racing decisions exactly one completes each wait, the others 409", async () => {
  const ids = await startWaiting(single, "one");
  const outcomes = await Promise.all(ids.map((id) => race(id, ACTORS)));
  for (const outcome of outcomes) {
    expect(outcome.filter((o) => o !== "conflict" && o.completed)).toHaveLength(1);
    expect(outcome.filter((o) => o === "conflict")).toHaveLength(ACTORS.length - 1);
  }
  const counts = await sql<any>`
    select r.id, (select count(*)::int from durable_approval_decisions d where d.run_id = r.id) as decisions,
           (select count(*)::int from durable_signals g where g.run_id = r.id) as deliveries
      from durable_runs r where r.id like 'one-%'`.execute(admin);
  expect(counts.rows.every((row: any) => row.decisions === 1 && row.deliveries === 1)).toBe(true);
  await Promise.all(ids.map((id) => setup.advance(id)));
  for (const [i, id] of ids.entries()) {
    const status = await setup.status(id);
    expect(status?.status).toBe("completed");
    const winner = ACTORS[outcomes[i]!.findIndex((o) => o !== "conflict")]!;
    expect(status?.output).toEqual({ approved: true, actor: winner, reason: `by ${winner}` });
  }
});

it("quorum 2: of three racing approvers one is recorded, one completes, one is a 409", async () => {
  const ids = await startWaiting(pair, "two");
  const outcomes = await Promise.all(ids.map((id) => race(id, ACTORS.slice(0, 3))));
  for (const outcome of outcomes) {
    const answered = outcome.filter((o): o is DecideResult => o !== "conflict");
    expect(answered.map((o) => o.completed).sort()).toEqual([false, true]);
    expect(answered.find((o) => o.completed)?.approvals).toBe(2);
    expect(outcome.filter((o) => o === "conflict")).toHaveLength(1);
  }
  const counts = await sql<any>`
    select r.id, (select count(*)::int from durable_approval_decisions d where d.run_id = r.id) as decisions,
           (select count(*)::int from durable_signals g where g.run_id = r.id) as deliveries
      from durable_runs r where r.id like 'two-%'`.execute(admin);
  expect(counts.rows.every((row: any) => row.decisions === 2 && row.deliveries === 1)).toBe(true);
  await Promise.all(ids.map((id) => setup.advance(id)));
  for (const [i, id] of ids.entries()) {
    const completedBy = ACTORS[outcomes[i]!.findIndex((o) => o !== "conflict" && o.completed)]!;
    expect((await setup.status(id))?.output).toMatchObject({ approved: true, actor: completedBy });
  }
});
