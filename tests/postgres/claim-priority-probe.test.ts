// The claim's priority probe (durable_due_priority, function set 24) reads the first due entry of
// durable_runs_due_priority whatever the table's statistics say (docs/performance.md, "The priority
// probe"). plpgsql plans a session's first calls for their values, and after a drain the table's
// estimates priced a sequential scan and a sort of every due run below the index: the first five
// claims of a session planned so before function set 24. auto_explain prints each nested plan.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { collectNestedPlans } from "../helpers/nested-plans";

const CALLS = 8; // plpgsql plans a statement for its arguments 5 times, then may keep a generic plan

const flow = defineWorkflow({ name: "probed", input: z.object({}), run: async () => null });

let admin: Durable;
let session: pg.Client;
let plans: string[] = [];
beforeAll(async () => {
  const url = await createTestDatabase("durable_claim_priority_probe");
  admin = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [flow], secrets: { durable: "t" } });
  await admin.migrate();
  session = new pg.Client({ connectionString: url });
  await session.connect();
  // A drain of 2,000 runs, as an app's table is after a busy spell (ended runs, their old row
  // versions still in the indexes); then 2,000 due runs.
  await admin.startMany(
    flow,
    Array.from({ length: 1000 }, () => ({})),
  );
  await admin.startMany(
    flow,
    Array.from({ length: 1000 }, () => ({})),
  );
  while ((await admin.tick()).claimed > 0) {}
  await admin.startMany(
    flow,
    Array.from({ length: 1000 }, () => ({})),
  );
  await admin.startMany(
    flow,
    Array.from({ length: 1000 }, () => ({})),
  );
  plans = await collectNestedPlans(session);
});
afterAll(async () => {
  await session?.end();
  await admin?.close();
});

it("each claim finds the highest due priority by the index, never by sorting every due run", async () => {
  for (let i = 0; i < CALLS; i++) {
    const { rows } = await session.query(
      `select durable_claim_run('["probed"]', null, 60000, '[]', '{}', null, '{}', true) as c`,
    );
    expect(rows[0].c.run.status).toBe("running");
  }
  const probes = plans.filter((p) => /order by priority desc, wake_at\s+limit 1/i.test(p));
  expect(probes.length).toBeGreaterThanOrEqual(CALLS);
  expect(probes.filter((p) => !p.includes("Index Scan using durable_runs_due_priority"))).toEqual([]);
  expect(probes.filter((p) => /Seq Scan on durable_runs|Sort Key/.test(p))).toEqual([]);
});
