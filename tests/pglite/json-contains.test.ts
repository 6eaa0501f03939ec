// jsonContains (lib/durable/json.ts) answers as PostgreSQL's own jsonb `@>` does, case by case:
// the in-process match of a workflow's `on.match` and of a replayed waitForEvent.
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { jsonContains } from "@/lib/durable/json";

const CASES: [unknown, unknown][] = [
  [{ a: 1, b: 2 }, { a: 1 }],
  [{ a: 1 }, { a: 1, b: 2 }],
  [{ a: 1 }, {}],
  [{}, {}],
  [{ a: 1 }, { a: 1.0 }],
  [{ a: 1 }, { a: "1" }],
  [{ a: null }, { a: null }],
  [{ a: false }, { a: null }],
  [{ a: { b: { c: 1, d: 2 } } }, { a: { b: { c: 1 } } }],
  [{ a: { b: 1 } }, { a: {} }],
  [{ a: { b: 1 } }, { a: [] }],
  [{ a: [1, 2, 3] }, { a: [3, 1] }],
  [{ a: [1, 2, 3] }, { a: [4] }],
  [{ a: [1, 2, 3] }, { a: [] }],
  [{ a: [1, 1] }, { a: [1, 1, 1] }],
  [{ a: ["x"] }, { a: "x" }],
  [{ a: "x" }, { a: ["x"] }],
  [{ a: [{ b: 1, c: 2 }, { d: 3 }] }, { a: [{ b: 1 }] }],
  [{ a: [{ b: 1, c: 2 }, { d: 3 }] }, { a: [{ b: 1, d: 3 }] }],
  [{ a: [[1, 2], [3]] }, { a: [[1]] }],
  [{ a: [[1, 2], [3]] }, { a: [1] }],
  [{ a: [1, [2]] }, { a: [[2]] }],
  [{ a: [{ b: 1 }] }, { a: [[]] }],
  [{ a: [[]] }, { a: [{}] }],
  [{ "a.b": 1 }, { "a.b": 1 }],
  [{ a: "é" }, { a: "é" }],
  [{ a: 1 }, [1]],
  [[1, 2], { a: 1 }],
  [[1, 2, 3], [2]],
  [[1, 2, 3], 2],
  [[1, 2, 3], 4],
  [[[1]], 1],
  [2, 2],
  [2, [2]],
  ["a", "a"],
  ["a", "b"],
  [null, null],
  [true, true],
  [true, false],
  [[{ a: 1 }], { a: 1 }],
  [[{ a: 1 }], [{ a: 1 }]],
  [{ a: 1e21 }, { a: 1e21 }],
  [{ a: 0.1 }, { a: 0.1 }],
  [{ a: -0 }, { a: 0 }],
];

let pg: PGlite;
beforeAll(async () => {
  pg = await PGlite.create();
});
afterAll(async () => pg?.close());

it("answers every case as PostgreSQL's jsonb @> does", async () => {
  const answers = await pg.query<{ n: number; contains: boolean }>(
    "select n::int, (c -> 0) @> (c -> 1) as contains from jsonb_array_elements($1::jsonb) with ordinality as x (c, n)",
    [JSON.stringify(CASES)],
  );
  expect(answers.rows).toHaveLength(CASES.length);
  for (const row of answers.rows) {
    const [container, contained] = CASES[row.n - 1]!;
    expect(jsonContains(container, contained), JSON.stringify([container, contained])).toBe(row.contains);
  }
  // The table has both answers in it, so it is not one that a constant would pass.
  expect(new Set(answers.rows.map((row) => row.contains))).toEqual(new Set([true, false]));
});
