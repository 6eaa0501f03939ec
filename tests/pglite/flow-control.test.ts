// Flow control on PGlite (docs/guide/flow-control.md): rate limits decided in the claim, debounce in
// start's statement, priority in the claim's order, and the bad options refused before anything is
// written. Racing claimers on the real server: tests/postgres/flow-control-racing.test.ts.
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { admin, createFixture, jsonRequest } from "../routes/harness";

/** The order bodies ran in: "<workflow>:<label>". */
const ran: string[] = [];

const limited = defineWorkflow({
  name: "fc-limited",
  input: z.object({ tenant: z.string(), n: z.number() }),
  // A minute, not a second: a loaded machine takes more than a second of real time to drain the
  // backlog, and the window is real time plus the moved clock.
  rateLimit: { key: (input) => input.tenant, limit: 5, period: "1m" },
  async run(_ctx, input) {
    ran.push(`limited:${input.tenant}-${input.n}`);
    return input.n;
  },
});

const whole = defineWorkflow({
  name: "fc-whole",
  input: z.object({ n: z.number() }),
  rateLimit: { limit: 2, period: "1m" },
  async run(_ctx, input) {
    return input.n;
  },
});

const debounced = defineWorkflow({
  name: "fc-debounced",
  input: z.object({ doc: z.string(), text: z.string() }),
  debounce: { key: (input) => input.doc, period: "5s", maxWait: "12s" },
  async run(_ctx, input) {
    ran.push(`debounced:${input.text}`);
    return input.text;
  },
});

const ranked = defineWorkflow({
  name: "fc-ranked",
  input: z.object({ label: z.string(), urgent: z.boolean().default(false) }),
  priority: (input) => (input.urgent ? 10 : 0),
  async run(_ctx, input) {
    ran.push(`ranked:${input.label}`);
    return input.label;
  },
});

let durable: Durable;
beforeAll(async () => {
  durable = createDurable({
    db: await connect("memory://"),
    workflows: [limited, whole, debounced, ranked],
    secrets: { durable: "t" },
  });
  await durable.migrate();
});
afterAll(() => durable.close());
beforeEach(async () => {
  await resetDurableTables(durable.db);
  ran.length = 0;
});

const rows = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(durable.db)).rows;
async function drain(): Promise<number> {
  let claimed = 0;
  for (;;) {
    const report = await durable.tick();
    claimed += report.claimed;
    if (report.claimed === 0) return claimed;
  }
}
/** The first claims of each key, by first-claim time: the most within any `periodMs`. */
async function mostStartsPerWindow(workflow: string, periodMs: number): Promise<number> {
  const [row] = await rows<{ most: number | null }>(sql`
    select max(n)::int as most from (
      select (select count(*) from durable_runs b
               where b.workflow = a.workflow and b.rate_key = a.rate_key
                 and b.first_claimed_at >= a.first_claimed_at
                 and b.first_claimed_at < a.first_claimed_at + ${periodMs}::int * interval '1 millisecond') as n
        from durable_runs a where a.workflow = ${workflow} and a.first_claimed_at is not null) w`);
  return row!.most ?? 0;
}

describe("rateLimit", () => {
  it("starts at most 5 runs of a key per minute, holds the rest out of the due range, drops none", async () => {
    for (let n = 0; n < 23; n++) await durable.start(limited, { tenant: "a", n }, { id: `a-${n}` });
    for (let n = 0; n < 3; n++) await durable.start(limited, { tenant: "b", n }, { id: `b-${n}` });
    expect(await drain()).toBe(8); // 5 of key a, the 3 of key b
    // The 18 held runs are not due: their wake_at is their slot, a minute apart per 5, so no tick
    // reads them before then (a tick with nothing due claims nothing and holds nothing).
    const held = await rows<{ due: number; slots: number; pending: number }>(sql`
      select count(*) filter (where wake_at <= durable_now())::int as due,
             count(distinct date_trunc('minute', rate_slot_at - (select min(first_claimed_at) from durable_runs)))::int
               as slots,
             count(*)::int as pending
        from durable_runs where status = 'pending'`);
    expect(held[0]).toEqual({ due: 0, slots: 4, pending: 18 });
    for (let window = 1; window <= 4; window++) {
      await durable.testing.advanceClock("1m");
      expect(await drain()).toBe(window < 4 ? 5 : 3);
    }
    const status = await rows<{ status: string; n: number }>(
      sql`select status, count(*)::int as n from durable_runs group by status`,
    );
    expect(status).toEqual([{ status: "completed", n: 26 }]);
    expect(await mostStartsPerWindow("fc-limited", 60_000)).toBe(5);
    // In the order they were started.
    const order = ran.filter((r) => r.startsWith("limited:a-")).map((r) => Number(r.split("-")[1]));
    expect(order).toEqual([...Array(23).keys()]);
  });

  it("without a key limits the whole workflow; a retried or released run is not counted again", async () => {
    for (let n = 0; n < 3; n++) await durable.start(whole, { n }, { id: `w-${n}` });
    expect(await drain()).toBe(2);
    const [run] = await rows<{ rate_key: string; wake_in_s: number }>(sql`
      select rate_key, round(extract(epoch from wake_at - durable_now()))::int as wake_in_s
        from durable_runs where status = 'pending'`);
    expect(run).toEqual({ rate_key: "", wake_in_s: 60 });
    await durable.testing.advanceClock("59s");
    expect(await drain()).toBe(0);
    await durable.testing.advanceClock("2s");
    expect(await drain()).toBe(1);
  });

  it("a held run whose ttl ends before its slot still expires on time", async () => {
    await durable.start(whole, { n: 0 });
    await durable.start(whole, { n: 1 });
    const late = await durable.start(whole, { n: 2 }, { ttl: "10s" });
    expect(await drain()).toBe(2);
    const [row] = await rows<{ wake_in_s: number }>(
      sql`select round(extract(epoch from wake_at - durable_now()))::int as wake_in_s from durable_runs
           where id = ${late.id}`,
    );
    expect(row!.wake_in_s).toBe(10);
    await durable.testing.advanceClock("11s");
    await drain();
    expect((await durable.status(late.id))?.error?.code).toBe("expired");
  });
});

describe("debounce", () => {
  it("50 starts within the period make one run, with the last input, due a period after the last", async () => {
    const results = [];
    for (let n = 0; n < 50; n++) results.push(await durable.start(debounced, { doc: "d1", text: `v${n}` }));
    expect(results[0]).toMatchObject({ created: true });
    expect(results[0]!.debounced).toBeUndefined();
    for (const result of results.slice(1)) {
      expect(result).toMatchObject({ id: results[0]!.id, created: false, debounced: true });
    }
    const [run] = await rows<{ n: number; text: string; wake_in_s: number }>(sql`
      select count(*) over ()::int as n, input ->> 'text' as text,
             round(extract(epoch from wake_at - durable_now()))::int as wake_in_s
        from durable_runs`);
    expect(run).toEqual({ n: 1, text: "v49", wake_in_s: 5 });
    expect(await drain()).toBe(0); // not due before the period
    await durable.testing.advanceClock("5s");
    expect(await drain()).toBe(1);
    expect(ran).toEqual(["debounced:v49"]);
    // Once claimed, the key's next start is a new run.
    const next = await durable.start(debounced, { doc: "d1", text: "after" });
    expect(next.created).toBe(true);
    expect(next.id).not.toBe(results[0]!.id);
  });

  it("never moves the start past maxWait after the first start; other keys are other runs", async () => {
    const first = await durable.start(debounced, { doc: "d2", text: "a" });
    await durable.start(debounced, { doc: "d3", text: "other" });
    for (const text of ["b", "c", "d"]) {
      await durable.testing.advanceClock("4s");
      await durable.start(debounced, { doc: "d2", text });
    }
    // 12 s after the first start (maxWait), not 5 s after the last (which would be 17 s).
    const [run] = await rows<{ wake_after_first_s: number }>(sql`
      select round(extract(epoch from wake_at - created_at))::int as wake_after_first_s
        from durable_runs where id = ${first.id}`);
    expect(run!.wake_after_first_s).toBe(12);
    expect((await rows<{ n: number }>(sql`select count(*)::int as n from durable_runs`))[0]!.n).toBe(2);
  });

  it("starts racing on one key make one run", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, n) => durable.start(debounced, { doc: "d4", text: `r${n}` })),
    );
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
  });
});

describe("priority", () => {
  it("claims due runs by priority, higher first, then by due time", async () => {
    await durable.start(ranked, { label: "p0-first" });
    await durable.start(ranked, { label: "p5" }, { priority: 5 });
    await durable.start(ranked, { label: "urgent", urgent: true }); // priority(input) = 10
    await durable.start(ranked, { label: "p-1" }, { priority: -1 });
    await durable.start(ranked, { label: "p5-later" }, { priority: 5 });
    await durable.start(ranked, { label: "override", urgent: true }, { priority: 1 });
    await durable.start(ranked, { label: "p0-second" });
    await drain();
    expect(ran).toEqual([
      "ranked:urgent",
      "ranked:p5",
      "ranked:p5-later",
      "ranked:override",
      "ranked:p0-first",
      "ranked:p0-second",
      "ranked:p-1",
    ]);
  });

  it("a higher priority not yet due does not hold back a lower one that is", async () => {
    await durable.start(debounced, { doc: "later", text: "x" }); // due in 5 s
    await sql`update durable_runs set priority = 100`.execute(durable.db);
    await durable.start(ranked, { label: "now" });
    expect(await drain()).toBe(1);
    expect(ran).toEqual(["ranked:now"]);
  });
});

describe("bad input", () => {
  const definition = { name: "bad", input: z.object({}), run: async () => null };
  it.each([
    ["limit 0", { rateLimit: { limit: 0, period: "1s" } }],
    ["limit 1.5", { rateLimit: { limit: 1.5, period: "1s" } }],
    ["limit over 10,000", { rateLimit: { limit: 10_001, period: "1s" } }],
    ["period 5ms", { rateLimit: { limit: 1, period: "5ms" } }],
    ["period 31d", { rateLimit: { limit: 1, period: "31d" } }],
    ["period unparsable", { rateLimit: { limit: 1, period: "soon" } }],
    ["a key that is not a function", { rateLimit: { key: "tenant", limit: 1, period: "1s" } }],
    ["debounce without a key", { debounce: { period: "1s" } }],
    ["maxWait below period", { debounce: { key: () => "k", period: "2s", maxWait: "1s" } }],
    ["priority not a function", { priority: 3 }],
  ])("defineWorkflow refuses %s", (_label, option) => {
    expect(() => defineWorkflow({ ...definition, ...option } as never)).toThrow(InvalidInputError);
  });

  it("start refuses a priority that is not an integer, and writes nothing", async () => {
    for (const priority of [1.5, "1", 2 ** 31, Number.NaN]) {
      await expect(durable.start(ranked, { label: "x" }, { priority: priority as number })).rejects.toThrow(
        InvalidInputError,
      );
    }
    const odd = defineWorkflow({ name: "fc-odd", input: z.object({}), priority: () => 0.5, run: async () => 1 });
    const other = createDurable({ db: durable.db, workflows: [odd], secrets: { durable: "t" } });
    await expect(other.start(odd, {})).rejects.toThrow(/priority\(input\) is an integer/);
    await expect(durable.startMany(debounced, [{ doc: "a", text: "b" }])).rejects.toThrow(InvalidInputError);
    expect((await rows<{ n: number }>(sql`select count(*)::int as n from durable_runs`))[0]!.n).toBe(0);
  });

  it("POST /api/durable/runs answers 422 for a bad priority and starts nothing; a good one is stored", async () => {
    const fx = await createFixture({}, [ranked]);
    try {
      const bad = await fx.routes.runs.POST(
        jsonRequest("/runs", { workflow: "fc-ranked", input: { label: "x" }, priority: 0.5 }, admin),
      );
      expect(bad.status).toBe(422);
      expect((await bad.json()).error.code).toBe("invalid_input");
      const good = await fx.routes.runs.POST(
        jsonRequest("/runs", { workflow: "fc-ranked", input: { label: "x" }, priority: 7, id: "p7" }, admin),
      );
      expect(good.status).toBe(201);
      const stored = await sql<{ id: string; priority: number }>`select id, priority from durable_runs`.execute(
        fx.durable.db,
      );
      expect(stored.rows).toEqual([{ id: "p7", priority: 7 }]);
    } finally {
      await fx.durable.close();
    }
  });
});
