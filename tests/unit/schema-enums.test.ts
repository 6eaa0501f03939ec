// zod owns the enums; the SQL checks, as the migrations leave them, must say the same
// (docs/decisions.md, "zod owns the enums"). Read from a migrated database, so a later migration
// that redefines a check is what counts: since 0013 the column's domain holds it (docs/sql.md,
// "Migration 0013").
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

/** The values of the `in (...)` check of `table`.`column`'s domain, in their order. */
async function checkValues(table: string, column: string): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    select pg_get_constraintdef(c.oid) as def
      from pg_attribute a join pg_type t on t.oid = a.atttypid and t.typtype = 'd'
      join pg_constraint c on c.contypid = t.oid and c.contype = 'c'
     where a.attrelid = ${table}::regclass and a.attname = ${column}`.execute(db);
  if (rows.length !== 1) throw new Error(`no check of the domain of ${table}.${column}`);
  return [...rows[0]!.def.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
}

it("durable_runs.status matches the zod enum", async () => {
  expect(await checkValues("durable_runs", "status")).toEqual(runStatusValues.options);
});
it("durable_steps.status and kind match the zod enums", async () => {
  expect(await checkValues("durable_steps", "status")).toEqual(stepStatusValues.options);
  expect(await checkValues("durable_steps", "kind")).toEqual(stepKindValues.options);
});
