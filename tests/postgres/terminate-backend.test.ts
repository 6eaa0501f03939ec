// pg_terminate_backend on a connection the engine holds checked out, inside a tx step's
// transaction: the process survives (pg emits 'error' on a checked-out client, which crashes a
// process that does not listen), the transaction rolls back, the step fails cleanly.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";

let reached!: () => void;
const inside = new Promise<void>((resolve) => (reached = resolve));
let release!: () => void;
const gate = new Promise<void>((resolve) => (release = resolve));

const holder = defineWorkflow({
  name: "holder",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.tx("hold", async (tx) => {
      await sql`insert into held_effects (run_id) values (${ctx.runId})`.execute(tx);
      reached();
      await gate; // the connection sits idle in transaction here
      await sql`insert into held_effects (run_id) values (${ctx.runId})`.execute(tx);
    });
    return "unreachable";
  },
});

let db: Kysely<any>;
let durable: Durable;
beforeAll(async () => {
  db = await connect(await createTestDatabase("durable_terminate_backend"), { driver: "pg" });
  durable = createDurable({ db, workflows: [holder], secrets: { durable: "t" }, log: () => {} });
  await durable.migrate();
  await sql`create table held_effects (run_id text)`.execute(db);
});
afterAll(async () => {
  await durable?.close();
});

it("survives the termination of a connection held in a tx step, rolling its effect back", async () => {
  await durable.start(holder, {}, { id: "held" });
  const ticking = durable.tick({ budgetMs: 40_000 });
  await inside;
  const { rows } = await sql<{ ok: boolean }>`
    select pg_terminate_backend(pid) as ok from pg_stat_activity
     where datname = current_database() and state like 'idle in transaction%'`.execute(db);
  expect(rows).toEqual([{ ok: true }]);
  await new Promise((r) => setTimeout(r, 100)); // the 'error' event reaches the client first
  release();
  expect(await ticking).toMatchObject({ claimed: 1, failed: 1 });
  const status = (await durable.status("held"))!;
  expect(status.steps[0]).toMatchObject({ id: "hold", status: "failed" });
  expect((await sql<{ n: number }>`select count(*)::int as n from held_effects`.execute(db)).rows[0]!.n).toBe(0);
});
