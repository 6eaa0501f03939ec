// A bulk action's filter (docs/guide/runs.md, "Finding runs", "Acting on many runs"), one suite
// run on every database: a filter that names nothing once normalised (an empty metadata object, a
// value the JSON round trip drops, a key whose value went missing) is refused with
// InvalidInputError and changes nothing; and, over filters fast-check makes (meaningful and
// degenerate fields alike), cancelMany and retryMany change exactly the runs `list()` with the
// same filter returns that they apply to, never one more.
import fc from "fast-check";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError, type RunFilterOptions } from "@/lib/durable";
import { cancelRunsBatch, retryRunsBatch } from "@/lib/durable/store";
import { resetDurableTables } from "../helpers/databases";

const held = defineWorkflow({
  name: "held",
  input: z.object({ n: z.number() }),
  async run(ctx) {
    await ctx.step.waitForSignal("go");
    return "went";
  },
});

const STATUSES = ["pending", "running", "waiting", "completed", "failed", "cancelled"] as const;
const LIVE = new Set<string>(["pending", "running", "waiting"]);
const BASE = Date.parse("2026-01-01T00:00:00.000Z");
const minutes = (n: number) => new Date(BASE + n * 60_000);

/** One run row of a property case: the fields every filter can name. */
interface Row {
  status: (typeof STATUSES)[number];
  workflow: string;
  version: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  parent: number | null;
  minute: number;
}

const rowArb: fc.Arbitrary<Row> = fc.record({
  status: fc.constantFrom(...STATUSES),
  workflow: fc.constantFrom("w1", "w2"),
  version: fc.constantFrom(null, "1", "2"),
  tags: fc.subarray(["a", "b"]),
  metadata: fc.record(
    { batch: fc.constantFrom("b1", "b2"), kind: fc.constantFrom("x", "y"), nested: fc.constant({ k: 1 }) },
    { requiredKeys: [] },
  ),
  parent: fc.option(fc.nat(3), { nil: null }),
  minute: fc.nat(9),
});

// Each field absent, or a value that names something (most of the time), or a degenerate one: a
// value that went missing, names nothing, or that JSON cannot carry.
const mostly = (named: fc.Arbitrary<unknown>, degenerate: readonly unknown[]) =>
  fc.oneof({ arbitrary: named, weight: 4 }, { arbitrary: fc.constantFrom(...degenerate), weight: 1 });
const metadataValueArb = mostly(fc.constantFrom("b1", "b2", "x", { k: 1 }, {}, null), [
  undefined,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  () => "b1",
  Symbol("b1"),
  [undefined],
  { k: undefined },
  new Map([["k", 1]]),
]);
const dateArb = mostly(
  fc.oneof(
    fc.nat(10).map(minutes),
    fc.nat(10).map((n) => minutes(n).toISOString()),
  ),
  [undefined, new Date(Number.NaN), "", "not a date"],
);
const fieldArbs = {
  status: mostly(fc.oneof(fc.constantFrom(...STATUSES), fc.subarray([...STATUSES], { minLength: 1 })), [undefined, []]),
  workflow: mostly(fc.constantFrom("w1", "w2"), [undefined, ""]),
  version: mostly(fc.constantFrom("1", "2"), [undefined, ""]),
  tag: mostly(fc.constantFrom("a", "b"), [undefined, "", []]),
  parentId: mostly(fc.constantFrom("r0", "r1"), [undefined, ""]),
  metadata: mostly(fc.dictionary(fc.constantFrom("batch", "kind", "nested"), metadataValueArb, { maxKeys: 2 }), [
    undefined,
  ]),
  createdAfter: dateArb,
  createdBefore: dateArb,
};
type Field = keyof typeof fieldArbs;
// One or two fields at a time, so a filter of one degenerate field alone is common ({} is the example test's).
const filterArb: fc.Arbitrary<Record<string, unknown>> = fc
  .shuffledSubarray(Object.keys(fieldArbs) as Field[], { minLength: 1, maxLength: 2 })
  .chain((fields) => fc.record(Object.fromEntries(fields.map((field) => [field, fieldArbs[field]]))));

export function runBulkFilterContract(name: string, open: () => Promise<Kysely<any>>, numRuns: number) {
  describe(`bulk filters (${name})`, () => {
    let db: Kysely<any>;
    let durable: Durable;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows: [held], log: () => {} });
      await durable.migrate();
    });
    afterAll(() => durable?.close());
    beforeEach(() => resetDurableTables(db));

    const states = async () =>
      (
        await sql<{ id: string; status: string; fence: string }>`
          select id, status, fence::text from durable_runs order by id`.execute(db)
      ).rows;

    it("refuses a filter that names nothing once normalised, for every field, and changes nothing", async () => {
      await durable.startMany(held, [{ n: 1 }, { n: 2 }, { n: 3 }], { ids: ["r1", "r2", "r3"] });
      await durable.start(held, { n: 0 }, { id: "r0", tags: ["batch"] });
      await sql`update durable_runs set metadata = '{"batch": "b7"}', parent_id = 'r0' where id <> 'r0'`.execute(db);
      const before = await states();
      const batchId: string | undefined = JSON.parse(JSON.stringify({ batchId: undefined })).batchId;
      const degenerate: unknown[] = [
        {},
        { metadata: {} },
        { metadata: { batch: batchId } },
        { metadata: { batch: undefined, kind: undefined } },
        // A key that went missing beside one that names something would widen the action to it.
        { status: "pending", metadata: { batch: batchId } },
        { status: "pending", tag: undefined },
        { metadata: { batch: () => "b7" } },
        { metadata: { batch: Symbol("b7") } },
        { metadata: { batch: Number.NaN } },
        { metadata: { batch: Number.NEGATIVE_INFINITY } },
        { metadata: { batch: { id: undefined } } },
        { metadata: { batch: [undefined] } },
        { metadata: { batch: new Map([["id", "b7"]]) } },
        // Objects whose own toJSON writes something other than an object.
        { metadata: new Date(0) },
        { metadata: { toJSON: () => ["b7"] } },
        { metadata: { toJSON: () => "b7" } },
        { tag: undefined },
        { tag: "" },
        { tag: [] },
        { workflow: undefined },
        { workflow: "" },
        { version: undefined },
        { parentId: undefined },
        { parentId: "" },
        { createdAfter: undefined },
        { createdAfter: undefined, createdBefore: undefined },
        { createdAfter: new Date(Number.NaN) },
        { createdBefore: "" },
        { status: undefined },
        { status: [] },
        {
          status: undefined,
          workflow: undefined,
          version: undefined,
          tag: undefined,
          parentId: undefined,
          metadata: undefined,
          createdAfter: undefined,
          createdBefore: undefined,
        },
      ];
      for (const filter of degenerate) {
        const shown = JSON.stringify(filter, (_key, value) => (value === undefined ? "(undefined)" : value));
        await expect(durable.cancelMany(filter as RunFilterOptions), shown).rejects.toThrow(InvalidInputError);
        await expect(durable.retryMany(filter as RunFilterOptions), shown).rejects.toThrow(InvalidInputError);
      }
      // The store's batches refuse a query that narrows nothing, whoever calls them.
      for (const query of [{}, { metadata: {} }]) {
        await expect(cancelRunsBatch(db, query, { limit: 500, reason: null, children: "keep" })).rejects.toThrow(
          InvalidInputError,
        );
        await expect(retryRunsBatch(db, query, { limit: 500 })).rejects.toThrow(InvalidInputError);
      }
      expect(await states()).toEqual(before);
      // list() refuses the same degenerate values (an empty metadata filter, one JSON cannot carry).
      for (const metadata of [{}, { batch: batchId }, { batch: Number.NaN }, { batch: () => 1 }]) {
        await expect(durable.list({ metadata })).rejects.toThrow(InvalidInputError);
      }
      // What does name something still acts, on exactly those runs.
      expect(await durable.cancelMany({ metadata: { batch: "b7" } })).toEqual({ matched: 3, changed: 3 });
      expect((await durable.status("r0"))!.status).toBe("pending");
    });

    it("a bulk action changes exactly the runs list() returns for the same filter (property)", async () => {
      const ids = async (filter: unknown) => {
        try {
          const page = await durable.list({ ...(filter as RunFilterOptions), limit: 200 });
          return new Set(page.runs.map((run) => run.id));
        } catch (error) {
          if (!InvalidInputError.is(error)) throw error;
          return "refused" as const;
        }
      };
      await fc.assert(
        fc.asyncProperty(fc.array(rowArb, { minLength: 4, maxLength: 16 }), filterArb, async (rows, filter) => {
          for (const action of ["cancel", "retry"] as const) {
            await insertRows(db, rows);
            const listed = await ids(filter);
            const before = await states();
            let refused = false;
            let result: { matched: number; changed: number } | undefined;
            try {
              result =
                action === "cancel"
                  ? await durable.cancelMany(filter as RunFilterOptions, { children: "keep" })
                  : await durable.retryMany(filter as RunFilterOptions);
            } catch (error) {
              if (!InvalidInputError.is(error)) throw error;
              refused = true;
            }
            const after = await states();
            const changed = after.filter((row, i) => row.fence !== before[i]!.fence).map((row) => row.id);
            if (refused) {
              expect(changed).toEqual([]);
              // A refusal is list's own, a key whose value is undefined, or a filter that names
              // nothing: one list() answers with every run.
              const missing = Object.values(filter).some((value) => value === undefined);
              expect(listed === "refused" || missing || listed.size === rows.length).toBe(true);
              continue;
            }
            expect(listed).not.toBe("refused");
            // It named something that survives the JSON round trip (what crosses the wire of a
            // route or a queue): a field left once undefined keys, functions and the like drop.
            expect(namesAfterJson(filter), `acted on ${JSON.stringify(filter)}`).toBe(true);
            const applies = action === "cancel" ? (status: string) => LIVE.has(status) : (s: string) => s === "failed";
            const expected = before.filter((row) => (listed as Set<string>).has(row.id) && applies(row.status));
            expect(changed).toEqual(expected.map((row) => row.id));
            expect(result).toEqual({ matched: expected.length, changed: expected.length });
          }
        }),
        { numRuns },
      );
    }, 300_000);
  });
}

/** Whether the filter, through JSON, still has a field that is not an empty object. */
function namesAfterJson(filter: object): boolean {
  const wire = JSON.parse(JSON.stringify(filter)) as Record<string, unknown>;
  return Object.values(wire).some(
    (value) =>
      !(value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0),
  );
}

/** The rows of a property case, in place of the last case's, as r0, r1…: a parent is another row's id. */
async function insertRows(db: Kysely<any>, rows: Row[]) {
  await sql`delete from durable_events`.execute(db);
  await sql`delete from durable_runs`.execute(db);
  const parentOf = (row: Row) => (row.parent === null || row.parent >= rows.length ? null : `r${row.parent}`);
  const values = rows.map(
    (row, i) =>
      sql`(${`r${i}`}, ${row.workflow}, ${row.status}, '{}'::jsonb, ${row.version}, ${row.tags}::text[],
           ${JSON.stringify(row.metadata)}::jsonb, ${parentOf(row)},
           ${minutes(row.minute).toISOString()}::timestamptz + ${i} * interval '1 millisecond',
           case when ${row.status} in ('pending', 'running', 'waiting') then durable_now() end,
           case when ${row.status} in ('completed', 'failed', 'cancelled') then durable_now() end)`,
  );
  await sql`
    insert into durable_runs (id, workflow, status, input, version, tags, metadata, parent_id, created_at, wake_at,
                              finished_at)
    values ${sql.join(values)}`.execute(db);
}
