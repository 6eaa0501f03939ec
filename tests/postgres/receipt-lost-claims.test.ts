// The first receipt after a lost claim clears lost_claims (docs/sql.md, "durable_record_step";
// docs/rules.md, rule 7a) without ever waiting to upgrade its share lock: since function set 25 a
// receipt reads the flag under its share lock and upgrades only a row no other transaction holds
// (SKIP LOCKED), so receipts of one run never wait on each other's share locks (two that did would
// deadlock). A clear so skipped is left to a later receipt: lost_claims may overcount, never
// undercount.
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";

const idle = defineWorkflow({ name: "lost-claims-idle", input: z.object({}), run: async () => 0 });

let url: string;
let db: Kysely<any>;
let durable: Durable;

/** A run claimed, its lease ended by the database clock, and claimed again: one lost claim. */
async function runWithLostClaim(id: string): Promise<number> {
  await durable.start(idle, {}, { id });
  const claim = () =>
    sql<{ fence: string }>`select (durable_claim_run('["lost-claims-idle"]', ${id}, 60000, '[]')
                                   -> 'run' ->> 'fence') as fence`.execute(db);
  await claim();
  await durable.testing.advanceClock("10m");
  const { rows } = await claim();
  expect(await lostClaims(id)).toEqual({ lost_claims: 1, lost: true });
  return Number(rows[0]!.fence);
}

async function lostClaims(id: string) {
  const { rows } = await sql<{ lost_claims: number; lost: boolean }>`
    select lost_claims, lost_lease_until is not null as lost from durable_runs where id = ${id}`.execute(db);
  return rows[0];
}

/** A receipt of step `stepId` sent on its own connection, which gives up after 3 s waiting for a lock. */
async function record(id: string, fence: number, stepId: string) {
  const step = { step_id: stepId, seq: 0, kind: "run", status: "completed", attempt: 1, result: stepId };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("set lock_timeout = '3s'");
    const { rows } = await client.query("select durable_record_step($1, $2::bigint, $3::jsonb) as answer", [
      id,
      fence,
      JSON.stringify(step),
    ]);
    return rows[0].answer as { owned: boolean; conflict?: boolean };
  } finally {
    await client.end();
  }
}

describe("a receipt after a lost claim (PostgreSQL)", () => {
  beforeAll(async () => {
    url = await createTestDatabase("durable_receipt_lost_claims");
    db = await connect(url, { driver: "pg" });
    durable = createDurable({ db, workflows: [idle], testing: true, log: () => {} });
    await durable.migrate();
  });
  afterAll(async () => {
    await durable?.close();
  });
  beforeEach(async () => {
    await resetDurableTables(db);
  });

  it("the first receipt clears lost_claims and lost_lease_until", async () => {
    const fence = await runWithLostClaim("one");
    expect(await record("one", fence, "a")).toEqual({ owned: true, conflict: false });
    expect(await lostClaims("one")).toEqual({ lost_claims: 0, lost: false });
  });

  it("a receipt beside another share lock on the run writes without waiting; a later one clears", async () => {
    const fence = await runWithLostClaim("shared");
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      // Another receipt of the run in flight: it holds the row's share lock.
      await other.query("begin");
      await other.query("select 1 from durable_runs where id = 'shared' for share");
      // Before function set 25 the receipt's update waited for that lock (lock_timeout: an error).
      expect(await record("shared", fence, "a")).toEqual({ owned: true, conflict: false });
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from durable_steps where run_id = 'shared' and step_id = 'a'`.execute(db);
      expect(rows[0]!.n).toBe(1);
      // The clear was skipped: an overcount, which rule 7a allows.
      expect(await lostClaims("shared")).toEqual({ lost_claims: 1, lost: true });
      await other.query("commit");
    } finally {
      await other.end();
    }
    expect(await record("shared", fence, "b")).toEqual({ owned: true, conflict: false });
    expect(await lostClaims("shared")).toEqual({ lost_claims: 0, lost: false });
  });

  it("eight receipts of one run at once all land, none waits on another, and the run ends cleared", async () => {
    const fence = await runWithLostClaim("many");
    const steps = Array.from({ length: 8 }, (_, i) => `s${i}`);
    const answers = await Promise.all(steps.map((stepId) => record("many", fence, stepId)));
    expect(answers).toEqual(steps.map(() => ({ owned: true, conflict: false })));
    // Each clear either landed or was skipped beside another receipt's lock; one more alone clears.
    expect(await record("many", fence, "last")).toEqual({ owned: true, conflict: false });
    expect(await lostClaims("many")).toEqual({ lost_claims: 0, lost: false });
  });

  it("a stale fence's receipt writes nothing and clears nothing", async () => {
    const fence = await runWithLostClaim("stale");
    expect(await record("stale", fence - 1, "a")).toMatchObject({ owned: false, runStatus: "running" });
    expect(await lostClaims("stale")).toEqual({ lost_claims: 1, lost: true });
  });
});
