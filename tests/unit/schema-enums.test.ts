// zod owns the enums; the SQL check constraints must say the same (docs/decisions.md, \"Errors\").
import { expect, it } from "vitest";
import { migrations } from "@/lib/durable/store/migrations.generated";
import { runStatusValues, stepKindValues, stepStatusValues } from "@/lib/durable/schemas";

const sqlText = migrations.map((m) => m.sql).join("\n");
const checkValues = (table: string, column: string): string[] => {
  const body = sqlText.slice(sqlText.indexOf(`create table ${table}`));
  const match = new RegExp(`\\n  ${column} text not null[^\\n]*\\n?\\s*check \\(${column} in \\(([^)]*)\\)\\)`).exec(
    body,
  );
  if (!match) throw new Error(`no check constraint for ${table}.${column}`);
  return match[1]!.split(",").map((v) => v.trim().replace(/'/g, ""));
};

it("durable_runs.status matches the zod enum", () => {
  expect(checkValues("durable_runs", "status")).toEqual(runStatusValues.options);
});
it("durable_steps.status and kind match the zod enums", () => {
  expect(checkValues("durable_steps", "status")).toEqual(stepStatusValues.options);
  expect(checkValues("durable_steps", "kind")).toEqual(stepKindValues.options);
});
