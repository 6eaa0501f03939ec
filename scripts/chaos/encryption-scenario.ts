// Chaos scenario 13 (docs/invariants.md): scenario 4's nemesis, kills and frozen owners with
// encryption at rest on (docs/guide/encryption.md). Every process that touches the runs (the
// harness starting them, the workers, the drain) has the same DURABLE_ENCRYPTION_KEYS, as every
// deployment of a project does; I1–I10 must hold as without it, and E1 checks that what the
// scenario left in the database is sealed.
import { randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { killAndPause } from "./crash-scenarios";
import type { InvariantResult } from "./invariants";
import type { Scale, ScenarioResult } from "./scenario-support";

const VARIABLE = "DURABLE_ENCRYPTION_KEYS";

export async function encryptedKillAndPause(scale: Scale): Promise<ScenarioResult> {
  const before = process.env[VARIABLE];
  // The harness's own instances read it here; spawnWorker passes process.env on to the workers.
  process.env[VARIABLE] = `chaos:${randomBytes(32).toString("base64")}`;
  try {
    const result = await killAndPause(scale, {
      id: "13",
      database: "durable_chaos_encrypted",
      label: "encryption on: ",
    });
    return { ...result, invariants: async (db) => [await everyPayloadSealed(db)] };
  } finally {
    if (before === undefined) delete process.env[VARIABLE];
    else process.env[VARIABLE] = before;
  }
}

/** The payload columns the chaos workflow fills: each value stored is an envelope (JSON null carries nothing). */
const COLUMNS = [
  ["durable_runs", "input"],
  ["durable_runs", "output"],
  ["durable_steps", "result"],
] as const;

/** E1: no run input, output or step result of the scenario is stored plain. */
async function everyPayloadSealed(db: Kysely<any>): Promise<InvariantResult> {
  let checked = 0;
  const violations: string[] = [];
  for (const [table, column] of COLUMNS) {
    const { rows } = await sql<{ checked: number; plain: number; example: string | null }>`
      select count(*)::int as checked,
             count(*) filter (where not sealed)::int as plain,
             min(value::text) filter (where not sealed) as example
        from (select ${sql.ref(column)} as value,
                     jsonb_typeof(${sql.ref(column)}) = 'null'
                     or (jsonb_typeof(${sql.ref(column)}) = 'string'
                         and starts_with(${sql.ref(column)} #>> '{}', '$denc1.chaos.')) as sealed
                from ${sql.table(table)} where ${sql.ref(column)} is not null) v`.execute(db);
    checked += rows[0]!.checked;
    if (rows[0]!.plain > 0) violations.push(`${rows[0]!.plain} plain ${table}.${column}, e.g. ${rows[0]!.example}`);
  }
  return { id: "E1", name: "every run input, output and step result is sealed", checked, violations };
}
