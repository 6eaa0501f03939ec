// zod owns the enums; the SQL check constraints, as the migrations leave them, must say the same
// (docs/decisions.md, "zod owns the enums"). Read from a migrated database, so a later migration
// that redefines a constraint is what counts.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { runStatusValues, stepKindValues, stepStatusValues } from "@/lib/durable/schemas";
import { migrate } from "@/lib/durable/store/migrate";

let db: Kysely<any>;
beforeAll(async () => {
  db = await connect("memory://");
  await migrate(db);
});
afterAll(() => db.destroy());

/** The values of `check (column in (...))` on `table`, in their order. */
async function checkValues(table: string, column: string): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    select pg_get_constraintdef(c.oid) as def from pg_constraint c
     where c.conrelid = ${table}::regclass and c.contype = 'c' and c.conname = ${`${table}_${column}_check`}`.execute(
    db,
  );
  if (rows.length !== 1) throw new Error(`no check constraint for ${table}.${column}`);
  return [...rows[0]!.def.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
}

it("durable_runs.status matches the zod enum", async () => {
  expect(await checkValues("durable_runs", "status")).toEqual(runStatusValues.options);
});
it("durable_steps.status and kind match the zod enums", async () => {
  expect(await checkValues("durable_steps", "status")).toEqual(stepStatusValues.options);
  expect(await checkValues("durable_steps", "kind")).toEqual(stepKindValues.options);
});
