// The SQL module of lib/durable/store (docs/sql.md, "How the functions are applied"). It compiles
// store/migrations/*.sql and store/sql/functions/*.sql into store/migrations.generated.ts, so the
// runtime ships the SQL without reading files at request time, and keeps three committed records:
//   - store/migrations.lock: the SHA-256 of every shipped migration (`sha256sum -c` reads it in
//     store/). A new migration gets its line; a listed one whose bytes changed, or that is gone,
//     is an error, in a build as in a check.
//   - store/sql/functions.lock: the function set's revision and SHA-256. A build that finds the
//     hash changed adds 1 to the revision: migrate() applies the set to a database that recorded a
//     lower one.
//   - store/schema.snapshot.sql: the durable_* schema of a fresh install on PGlite.
// `--check` (CI, pretest) changes nothing and fails when any of them, or the module, is stale, or
// when a migration numbered 0007 or later creates a function. `--root <dir>` runs on a copy of the
// tree (tests/unit/sql-module.test.ts).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "../lib/durable/drivers/connect";
import { describeSchema } from "../lib/durable/store/describe-schema";
import { applyMigrations, type FunctionSet } from "../lib/durable/store/apply-migrations";

const check = process.argv.includes("--check");
const rootFlag = process.argv.indexOf("--root");
const root = rootFlag > 0 ? process.argv[rootFlag + 1]! : join(import.meta.dirname, "..");
const STORE = "lib/durable/store";
const at = (rel: string) => join(root, STORE, rel);

/** Migrations from this number on hold only tables, columns, indexes and drops. */
const FIRST_WITHOUT_FUNCTIONS = 7;
const CREATES_FUNCTION = /\bcreate\s+(or\s+replace\s+)?(function|procedure)\b/i;

interface SqlFile {
  name: string;
  sql: string;
}

const problems: string[] = [];
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const readOr = (file: string, fallback: string) => (existsSync(file) ? readFileSync(file, "utf8") : fallback);

function readSqlFiles(dir: string, pattern: RegExp): SqlFile[] {
  return readdirSync(at(dir))
    .filter((file) => pattern.test(file))
    .sort()
    .map((file) => ({ name: file.replace(/\.sql$/, ""), sql: readFileSync(join(at(dir), file), "utf8") }));
}

/** Checks every migration against migrations.lock and answers the lock as it should read. */
function lockMigrations(migrations: SqlFile[]): string {
  const locked = new Map<string, string>();
  for (const line of readOr(at("migrations.lock"), "").split("\n").filter(Boolean)) {
    const [hash, file] = line.split(/\s+/);
    locked.set(file!, hash!);
  }
  const present = new Set(migrations.map((m) => `migrations/${m.name}.sql`));
  for (const file of locked.keys()) {
    if (!present.has(file)) problems.push(`${STORE}/${file} is listed in ${STORE}/migrations.lock but missing.`);
  }
  const lines = migrations.map((migration) => {
    const file = `migrations/${migration.name}.sql`;
    const hash = sha256(migration.sql);
    const recorded = locked.get(file);
    if (recorded !== undefined && recorded !== hash) {
      problems.push(
        `${STORE}/${file} changed after it shipped (migrations.lock has ${recorded.slice(0, 12)}…, the file ` +
          `${hash.slice(0, 12)}…): apps have applied it, so put it back and make the change a new migration.`,
      );
    }
    if (recorded === undefined && check) {
      problems.push(`${STORE}/${file} is missing from ${STORE}/migrations.lock: run \`npm run build:sql\`.`);
    }
    const number = Number(migration.name.slice(0, 4));
    if (number >= FIRST_WITHOUT_FUNCTIONS && CREATES_FUNCTION.test(migration.sql)) {
      problems.push(
        `${STORE}/${file} creates a function: from 0007 on a function changes in ` +
          `${STORE}/sql/functions/<name>.sql, and migrations hold only tables, columns, indexes and drops.`,
      );
    }
    return `${recorded ?? hash}  ${file}\n`;
  });
  return lines.join("");
}

/**
 * The function files in the order they apply: a function whose body another file's calls comes
 * before it (PostgreSQL checks a SQL-language body's calls when it creates the function), else by
 * name. A call is a `durable_<name>(` in the text; a cycle (only plpgsql bodies, which are not
 * checked at creation, can call each other) falls back to the name order.
 */
function orderFunctions(files: SqlFile[]): SqlFile[] {
  const byName = new Map(files.map((file) => [file.name, file]));
  const ordered: SqlFile[] = [];
  const seen = new Set<string>();
  const visit = (file: SqlFile) => {
    if (seen.has(file.name)) return;
    seen.add(file.name);
    for (const [, called] of file.sql.matchAll(/\b(durable_\w+)\s*\(/g)) {
      const dependency = byName.get(called!);
      if (dependency) visit(dependency);
    }
    ordered.push(file);
  };
  for (const file of files) visit(file);
  return ordered;
}

/** The function set, with its revision moved on when the files' hash changed. */
function buildFunctionSet(): { set: FunctionSet; lock: string } {
  const files = readSqlFiles("sql/functions", /^durable_[a-z0-9_]+\.sql$/);
  const hash = sha256(files.map((file) => `${file.name}\0${file.sql}\0`).join(""));
  const lockText = readOr(at("sql/functions.lock"), "");
  const recorded = {
    revision: Number(/^revision (\d+)$/m.exec(lockText)?.[1] ?? 0),
    sha256: /^sha256 ([0-9a-f]{64})$/m.exec(lockText)?.[1],
  };
  let revision = recorded.revision;
  if (recorded.sha256 !== hash) {
    if (check) problems.push(`${STORE}/sql/functions/ changed since the last build: run \`npm run build:sql\`.`);
    else revision += 1;
  }
  const lock =
    "# The SQL function set (sql/functions/*.sql): its revision and the SHA-256 of its files.\n" +
    "# Written by `npm run build:sql`, which adds 1 to the revision when the hash changes; migrate()\n" +
    "# applies the set to a database that recorded a lower revision (docs/sql.md). Do not edit.\n" +
    `revision ${revision}\nsha256 ${hash}\n`;
  return { set: { revision, sha256: hash, files: orderFunctions(files) }, lock };
}

function moduleSource(migrations: SqlFile[], set: FunctionSet): string {
  return `// Generated by scripts/build-sql-module.ts from store/migrations/*.sql and store/sql/functions/*.sql.
// Do not edit.
export const migrations: ReadonlyArray<{ name: string; sql: string }> = ${JSON.stringify(migrations, null, 2)};

export const functionSet: {
  revision: number;
  sha256: string;
  files: ReadonlyArray<{ name: string; sql: string }>;
} = ${JSON.stringify(set, null, 2)};
`;
}

/** The schema of a fresh install: every migration and the set, on in-memory PGlite. */
async function snapshotSchema(migrations: SqlFile[], set: FunctionSet): Promise<string> {
  const db = await connect("memory://");
  try {
    await applyMigrations(db, { migrations, functionSet: set });
    return (
      "-- Generated by scripts/build-sql-module.ts: the durable_* schema of a fresh install (migrate() on\n" +
      "-- PGlite), as PostgreSQL prints it back. Do not edit: `npm run build:sql` writes it, `--check`\n" +
      '-- fails when it differs (docs/sql.md, "How the functions are applied").\n\n' +
      (await describeSchema(db))
    );
  } finally {
    await db.destroy();
  }
}

async function main(): Promise<void> {
  const migrations = readSqlFiles("migrations", /^\d{4}_[a-z0-9_]+\.sql$/);
  const outputs: Record<string, string> = { "migrations.lock": lockMigrations(migrations) };
  const { set, lock } = buildFunctionSet();
  outputs["sql/functions.lock"] = lock;
  outputs["migrations.generated.ts"] = moduleSource(migrations, set);
  if (problems.length === 0) outputs["schema.snapshot.sql"] = await snapshotSchema(migrations, set);
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
  const stale = Object.keys(outputs).filter((rel) => readOr(at(rel), "") !== outputs[rel]);
  if (check) {
    for (const rel of stale) console.error(`${STORE}/${rel} is stale: run \`npm run build:sql\`.`);
    if (stale.length > 0) process.exit(1);
    console.log(`${STORE}: SQL module current (${migrations.length} migrations, functions@${set.revision}).`);
  } else {
    for (const rel of stale) writeFileSync(at(rel), outputs[rel]!);
    console.log(`${STORE}: wrote ${stale.join(", ") || "nothing"} (functions@${set.revision}).`);
  }
}

await main();
