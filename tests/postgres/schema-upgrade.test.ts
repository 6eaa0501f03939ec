// An app that applied 0001–0006 as they shipped, upgraded by today's migrate(), ends with the schema
// of a fresh install: the same tables, columns, constraints, indexes, triggers and function bodies
// (docs/sql.md, "How the functions are applied"). describeSchema is the text schema.snapshot.sql
// holds for PGlite.
import type { Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connect } from "@/lib/durable/drivers/connect";
import { describeSchema } from "@/lib/durable/store/describe-schema";
import { migrate } from "@/lib/durable/store/migrate";
import { migrations } from "@/lib/durable/store/migrations.generated";
import { createTestDatabase } from "../helpers/databases";
import { installShipped, SHIPPED } from "../helpers/shipped-migrations";

const open: Kysely<any>[] = [];
async function database(name: string): Promise<Kysely<any>> {
  const db = await connect(await createTestDatabase(name), { driver: "pg", poolSize: 1 });
  open.push(db);
  return db;
}

let fresh: string;
beforeAll(async () => {
  const db = await database("durable_schema_fresh");
  expect(await migrate(db)).toEqual(migrations.map((m) => m.name));
  fresh = await describeSchema(db);
});
afterAll(async () => {
  for (const db of open) await db.destroy();
});

it("0001–0006 as shipped, then migrate(): the schema of a fresh install", async () => {
  const db = await database("durable_schema_upgraded");
  await installShipped(db);
  const shipped = await describeSchema(db);
  // What the upgrade has to change: 0007's table, and the five-argument claim (0004's body until now).
  expect(shipped).not.toEqual(fresh);
  expect(await migrate(db)).toEqual(migrations.slice(SHIPPED.length).map((m) => m.name));
  expect(await describeSchema(db)).toEqual(fresh);
  expect(await migrate(db)).toEqual([]);
  expect(await describeSchema(db)).toEqual(fresh);
});

it("an app of an earlier release (0001–0003) upgrades to the same schema", async () => {
  const db = await database("durable_schema_from_0003");
  await installShipped(db, 3);
  expect(await migrate(db)).toEqual(migrations.slice(3).map((m) => m.name));
  expect(await describeSchema(db)).toEqual(fresh);
});

it("the description names every table, index and function signature the engine relies on", () => {
  for (const text of [
    "create table durable_function_sets (",
    "CREATE INDEX durable_runs_due ON",
    "CREATE TRIGGER durable_runs_due_notify",
    "FUNCTION public.durable_claim_run(p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb)",
    "FUNCTION public.durable_claim_run(p_workflows jsonb, p_run_id text, p_lease_ms bigint, p_exclude jsonb, " +
      "p_limits jsonb)",
    "FUNCTION public.durable_count_due(p_workflows jsonb, p_cap integer)",
    "FUNCTION public.durable_finish_and_claim(",
  ]) {
    expect(fresh).toContain(text);
  }
});
