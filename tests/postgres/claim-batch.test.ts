// Batched claims on the real server (docs/decisions.md, "Batched claims"; docs/sql.md,
// "durable_claim_runs"): racing batch claimers on their own pools claim each run once under its
// own fence, and a batch of N claims exactly what N single claims take on the same data, by
// priority, concurrency limit, rate limit, version and deadline.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { type ClaimRequest, claimDueRun, claimDueRuns } from "@/lib/durable/store";
import { createTestDatabase } from "../helpers/databases";

const body = async () => "done";
const plain = defineWorkflow({ name: "cb-plain", input: z.object({ n: z.number() }), run: body });
const ranked = defineWorkflow({
  name: "cb-ranked",
  input: z.object({ n: z.number(), p: z.number() }),
  priority: (input) => input.p,
  run: body,
});
const keyed = defineWorkflow({
  name: "cb-keyed",
  input: z.object({ n: z.number(), k: z.string() }),
  concurrency: { key: (input) => input.k, limit: 2 },
  run: body,
});
const rated = defineWorkflow({
  name: "cb-rated",
  input: z.object({ n: z.number() }),
  rateLimit: { key: () => "partner", limit: 3, period: "1h" },
  run: body,
});
const workflows = [plain, ranked, keyed, rated];

/** What the instance of these workflows sends (engine/claim-and-advance.ts, chainedClaim). */
const request: ClaimRequest = {
  workflows: workflows.map((w) => w.name),
  versions: Object.fromEntries(workflows.map((w) => [w.name, [""]])),
  leaseMs: 60_000,
  limits: { "cb-keyed": 2 },
  rates: { "cb-rated": { limit: 3, periodMs: 3_600_000 } },
};

const handles: Kysely<any>[] = [];
afterAll(async () => {
  await Promise.all(handles.map((db) => db.destroy()));
});

async function database(name: string, poolSize = 2): Promise<{ url: string; db: Kysely<any>; durable: Durable }> {
  const url = await createTestDatabase(name);
  const db = await connect(url, { driver: "pg", poolSize });
  handles.push(db);
  const durable = createDurable({ db, workflows, secrets: { durable: "t" } });
  await durable.migrate();
  return { url, db, durable };
}

/** The same mix in each database, started one by one so that the due order is the same. */
async function startMix(durable: Durable, db: Kysely<any>): Promise<void> {
  for (let n = 0; n < 40; n++) {
    if (n % 4 === 0) await durable.start(ranked, { n, p: n % 3 }, { id: `ranked-${n}` });
    if (n % 4 === 1) await durable.start(keyed, { n, k: `k${n % 3}` }, { id: `keyed-${n}` });
    if (n % 4 === 2) await durable.start(rated, { n }, { id: `rated-${n}` });
    if (n % 4 === 3) await durable.start(plain, { n }, { id: `plain-${n}` });
  }
  // Runs of a version this instance does not run, and runs past their deadline (ended, not claimed).
  await sql`update durable_runs set version = 'gone' where id in ('plain-3', 'ranked-8', 'keyed-13')`.execute(db);
  await sql`update durable_runs set deadline_at = durable_now() - interval '1 second'
            where id in ('plain-7', 'ranked-12', 'rated-10')`.execute(db);
}

/** Every run as a claim leaves it: status, fence, attempts, and whether it was held far ahead. */
async function snapshot(db: Kysely<any>) {
  const { rows } = await sql<{ id: string; status: string; fence: number; held: boolean }>`
    select id, status, fence, attempts, wake_at > durable_now() + interval '10 minutes' as held
    from durable_runs order by id`.execute(db);
  return rows;
}

describe("a batch of N against N single claims on the same data", () => {
  let a: Awaited<ReturnType<typeof database>>;
  let b: Awaited<ReturnType<typeof database>>;
  beforeAll(async () => {
    a = await database("durable_claim_batch_a");
    b = await database("durable_claim_batch_b");
    await startMix(a.durable, a.db);
    await startMix(b.durable, b.db);
  });

  it("claims the same runs in the same order and leaves every row the same, round after round", async () => {
    for (const count of [7, 12, 40]) {
      const batch = await claimDueRuns(a.db, request, count);
      const singles = [];
      for (let i = 0; i < count; i++) {
        const claim = await claimDueRun(b.db, request);
        if (!claim) break;
        singles.push(claim);
      }
      expect(batch.map((c) => c.run.id)).toEqual(singles.map((c) => c.run.id));
      expect(await snapshot(a.db)).toEqual(await snapshot(b.db));
    }
    // The mix: by priority first; 2 runs of each key; 3 first claims of the rate key, its other
    // runs held; other versions left alone; runs past their deadline ended.
    const rows = await snapshot(a.db);
    const running = rows.filter((r) => r.status === "running").map((r) => r.id);
    expect(running.filter((id: string) => id.startsWith("keyed-"))).toHaveLength(6);
    expect(running.filter((id: string) => id.startsWith("rated-"))).toHaveLength(3);
    expect(rows.filter((r) => r.held).length).toBeGreaterThan(0);
    expect(rows.find((r) => r.id === "plain-3")).toMatchObject({ status: "pending", fence: 0 });
    expect(rows.find((r) => r.id === "plain-7")).toMatchObject({ status: "failed" });
    expect(running.every((id: string) => rows.find((r) => r.id === id)!.fence === 1)).toBe(true);
  });
});

describe("racing batch claimers", () => {
  const CLAIMERS = 6;
  const PLAIN = 300;
  let setup: Awaited<ReturnType<typeof database>>;
  beforeAll(async () => {
    setup = await database("durable_claim_batch_race");
    await setup.durable.startMany(
      plain,
      Array.from({ length: PLAIN }, (_, n) => ({ n })),
    );
    await setup.durable.startMany(
      keyed,
      Array.from({ length: 40 }, (_, n) => ({ n, k: `k${n % 4}` })),
    );
  });

  it(`${CLAIMERS} pools claiming batches at once: each run once, fence 1, none lost, keys in limits`, async () => {
    const pools = await Promise.all(
      Array.from({ length: CLAIMERS }, async () => {
        const db = await connect(setup.url, { driver: "pg", poolSize: 2 });
        handles.push(db);
        return db;
      }),
    );
    const claimed = await Promise.all(
      pools.map(async (db, index) => {
        const mine: { id: string; fence: number }[] = [];
        // Batches of different sizes, and one claimer of single claims beside them.
        for (;;) {
          const claims =
            index === 0
              ? [await claimDueRun(db, request)].filter((c) => c !== null)
              : await claimDueRuns(db, request, 3 + index);
          if (claims.length === 0) return mine;
          for (const c of claims) mine.push({ id: c.run.id, fence: c.run.fence });
        }
      }),
    );
    const all = claimed.flat();
    const ids = all.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(all.every((c) => c.fence === 1)).toBe(true);
    // Every plain run, and 2 runs of each of the 4 keys (the limit): the claims outlast this test.
    expect(ids).toHaveLength(PLAIN + 8);
    const { rows } = await sql<{ key: string; n: number }>`
      select concurrency_key as key, count(*)::int as n from durable_runs
      where status = 'running' and concurrency_key is not null group by 1 order by 1`.execute(setup.db);
    expect(rows).toEqual(["k0", "k1", "k2", "k3"].map((key) => ({ key, n: 2 })));
    const pending = await sql<{ n: number }>`
      select count(*)::int as n from durable_runs where workflow = 'cb-plain' and status <> 'running'`.execute(
      setup.db,
    );
    expect(pending.rows[0]!.n).toBe(0);
    // More than one claimer took part.
    expect(claimed.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
  });
});
