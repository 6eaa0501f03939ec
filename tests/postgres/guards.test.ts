// The guards and the mailbox on the real server: the shared suite, plus what needs several
// connections at once (racing deliveries, a tx step whose receipt loses while another session acts).
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { runGuardsContract } from "../contract/guards-contract";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

runGuardsContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_guards_pg"), { driver: "pg" }),
);

const ITEMS = 40;
let other: Durable | undefined; // a second instance on its own pool: "another session"

// Waits on "item" ITEMS times, each wait with its own id.
const collector = defineWorkflow({
  name: "collector",
  input: z.object({}),
  signals: { item: z.object({ n: z.number() }) },
  async run(ctx) {
    const items: number[] = [];
    for (let i = 0; i < ITEMS; i++) {
      const item = await ctx.step.waitForSignal<{ n: number }>("item", { id: `item-${i}` });
      items.push(item!.n);
    }
    return items;
  },
});

// A tx step whose receipt loses: another session records the step first, or cancels the run,
// while the step's transaction is open.
const overtakenTx = defineWorkflow({
  name: "overtaken-tx",
  input: z.object({ by: z.enum(["receipt", "cancel"]) }),
  async run(ctx, input) {
    return ctx.step.tx("t", async (trx) => {
      await sql`select 1`.execute(trx);
      if (input.by === "cancel") {
        await other!.cancel(ctx.runId, "cancelled while the tx step ran");
      } else {
        const { rows } = await sql<{ fence: number }>`select fence from durable_runs where id = ${ctx.runId}`.execute(
          other!.db,
        );
        const first = JSON.stringify({ step_id: "t", seq: 0, kind: "tx", status: "completed", attempt: 1, result: 1 });
        await sql`select durable_record_step(${ctx.runId}, ${rows[0]!.fence}::bigint, ${first}::jsonb)`.execute(
          other!.db,
        );
      }
      return 2;
    });
  },
});

describe("the mailbox and tx events with several connections (PostgreSQL)", () => {
  let durable: Durable;
  let db: Kysely<any>;

  beforeAll(async () => {
    const url = await createTestDatabase("durable_guards_racing");
    db = await connect(url, { driver: "pg", poolSize: 10 });
    durable = createDurable({ db, workflows: [collector, overtakenTx], defaults: { lease: "2s" } });
    await durable.migrate();
    other = createDurable({ db: await connect(url, { driver: "pg", poolSize: 2 }), workflows: [] });
  });
  afterAll(async () => {
    await other?.close();
    await durable?.close();
  });
  beforeEach(() => resetDurableTables(db));

  it("racing deliveries from 8 connections while the run takes them: none lost, none taken twice", async () => {
    await durable.start(collector, {}, { id: "collect" });
    await durable.tick({ budgetMs: 10_000 });
    // 8 senders at once, 5 deliveries each; every delivery sent twice under its id, at once.
    const send = (n: number) =>
      durable.signal({ runId: "collect", name: "item", payload: { n }, id: `item-delivery-${n}` });
    const senders = Array.from({ length: 8 }, (_, sender) =>
      (async () => {
        for (let k = 0; k < ITEMS / 8; k++) {
          const n = sender * 100 + k;
          await Promise.all([send(n), send(n)]);
        }
      })(),
    );
    // Two tick loops drain while the deliveries land.
    let done = false;
    const loops = Array.from({ length: 2 }, async () => {
      while (!done) {
        const report = await durable.tick({ budgetMs: 10_000 });
        if (report.claimed === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await Promise.all(senders);
    await until(async () => (await durable.status("collect"))?.status === "completed", 60_000);
    done = true;
    await Promise.all(loops);

    const { rows } = await sql<{ seq: number; n: number; taken_by: string | null }>`
      select seq, (payload ->> 'n')::int as n, taken_by from durable_signals
       where run_id = 'collect' order by seq`.execute(db);
    expect(rows).toHaveLength(ITEMS); // each repeat stored nothing
    expect(new Set(rows.map((row) => row.taken_by)).size).toBe(ITEMS); // each taken once, by one wait
    expect(rows.every((row) => row.taken_by !== null)).toBe(true);
    // The waits took them in arrival order: wait i got the i-th delivery.
    expect(rows.map((row) => row.taken_by)).toEqual(rows.map((_, i) => `item-${i}`));
    expect((await durable.status("collect"))!.output).toEqual(rows.map((row) => row.n));
  });

  it("notes the outcome conflict of a rolled-back tx receipt after the rollback", async () => {
    await durable.start(overtakenTx, { by: "receipt" }, { id: "conflict" });
    await durable.tick({ budgetMs: 10_000 });
    await until(async () => (await events("conflict")).includes("step.outcome-conflict"));
    expect(await durable.status("conflict")).toMatchObject({ status: "completed", output: 1 });
  });

  it("notes the fence rejection of a rolled-back tx receipt after the rollback", async () => {
    await durable.start(overtakenTx, { by: "cancel" }, { id: "rejected" });
    await durable.tick({ budgetMs: 10_000 });
    await until(async () => (await events("rejected")).includes("fence.rejected"));
    expect(await durable.status("rejected")).toMatchObject({ status: "cancelled", steps: [] });
  });

  const events = async (runId: string) =>
    (
      await sql<{ kind: string }>`select kind from durable_events where run_id = ${runId} order by id`.execute(db)
    ).rows.map((row) => row.kind);
});
