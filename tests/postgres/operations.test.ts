// Operations on the real server (docs/sql.md, "Migration 0011"): list({ tag }) and
// list({ metadata }) are answered by their GIN indexes on a table of 100,000 runs, never a
// sequential scan, with the planner free to choose and with enable_seqscan off; a bulk batch's
// pick likewise; and ctx.setMetadata costs no round trip: its patches ride on the next receipt,
// suspension or end (counted at the driver, as tests/postgres/round-trips.test.ts does).
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { runConditions, whereOf } from "@/lib/durable/store/list-runs";
import { createTestDatabase } from "../helpers/databases";

const statements: string[] = [];
const withMetadata = defineWorkflow({
  name: "ops-metadata",
  input: z.object({}),
  async run(ctx) {
    ctx.setMetadata({ stage: "calling" });
    await ctx.step.run("call", () => 1);
    ctx.setMetadata({ stage: "stamping", calls: 1 });
    await ctx.step.value("stamp", () => 2);
    ctx.setMetadata({ stage: "done" });
    return "done";
  },
});

let db: Kysely<any>;
let durable: Durable;
beforeAll(async () => {
  db = await connect(await createTestDatabase("durable_operations"), {
    driver: "pg",
    onQuery: (q) => statements.push(q),
  });
  durable = createDurable({ db, workflows: [withMetadata], secrets: { durable: "t" } });
  await durable.migrate();
  // 100,000 finished runs: 1 in 100 tagged "rare" (10 of them "needle" too) and with metadata
  // { plan: "pro" }, the rest tagged "common" (or untagged) without metadata.
  await sql`
    insert into durable_runs (id, workflow, status, input, finished_at, created_at, tags, metadata)
    select 'bulk-' || n, 'ops-metadata', 'completed', '{}', now(), now() - n * interval '1 second',
           case when n % 10000 = 0 then array['rare', 'needle'] when n % 100 = 0 then array['rare']
                when n % 2 = 0 then array['common'] else '{}' end,
           case when n % 100 = 0 then '{"plan": "pro", "region": "eu"}'::jsonb else '{}' end
      from generate_series(1, 100000) n`.execute(db);
  await sql`analyze durable_runs`.execute(db);
}, 120_000);
afterAll(async () => {
  await durable?.close();
});

async function planOf(query: Parameters<typeof runConditions>[0], seqscan: boolean): Promise<string> {
  const { rows } = await db.transaction().execute(async (tx) => {
    if (!seqscan) await sql`set local enable_seqscan = off`.execute(tx);
    return sql<{ "QUERY PLAN": string }>`
      explain select * from durable_runs where ${whereOf(runConditions(query))}
       order by created_at desc, id desc limit 51`.execute(tx);
  });
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

it("list({ tag }) and list({ metadata }) use their indexes at 100,000 runs, never a sequential scan", async () => {
  for (const seqscan of [true, false]) {
    const tag = await planOf({ tag: "rare" }, seqscan);
    expect(tag).not.toMatch(/Seq Scan/);
    expect(tag).toMatch(/durable_runs_tags|durable_runs_created/);
    const metadata = await planOf({ metadata: { plan: "pro" } }, seqscan);
    expect(metadata).not.toMatch(/Seq Scan/);
    expect(metadata).toMatch(/durable_runs_metadata|durable_runs_created/);
    // A tag on 1 run in 100 may be found by walking the newest runs (about 5,100 of them for a
    // page); one on 10 runs of 100,000 through its index, not by walking them all.
    expect(await planOf({ tag: "needle" }, seqscan)).toMatch(/durable_runs_tags/);
    // A bulk batch's pick (statuses narrowed, a keyset position) likewise.
    const batch = await planOf({ tag: "rare", statuses: ["pending", "running", "waiting"] }, seqscan);
    expect(batch).not.toMatch(/Seq Scan/);
  }
  const page = await durable.list({ tag: "rare", metadata: { region: "eu" }, limit: 200 });
  expect(page.runs).toHaveLength(200);
  expect(page.runs.every((run) => run.tags?.[0] === "rare" && run.metadata?.plan === "pro")).toBe(true);
  expect((await durable.list({ tag: "common", limit: 10 })).runs).toHaveLength(10);
});

it("setMetadata rides on the next receipt and on the end: no round trip of its own", async () => {
  await durable.start(withMetadata, {}, { id: "meta-1", tags: ["mine"] });
  statements.length = 0;
  expect(await durable.advance("meta-1")).toBe("completed");
  const kinds = statements.map((q) =>
    /durable_claim_run/.test(q)
      ? "claim"
      : /durable_record_step/.test(q)
        ? "receipt"
        : /durable_finish_run/.test(q)
          ? "finish"
          : q.slice(0, 30),
  );
  // What the same body costs without metadata (docs/sql.md, "What an invocation costs").
  expect(kinds).toEqual(["claim", "receipt", "finish"]);
  expect(await durable.status("meta-1")).toMatchObject({
    status: "completed",
    tags: ["mine"],
    metadata: { stage: "done", calls: 1 },
  });
});
