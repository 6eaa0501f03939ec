// scripts/build-sql-module.ts keeps the SQL module honest (docs/sql.md, "How the functions are
// applied"): `--check` fails when a shipped migration changed, when a migration is missing from
// migrations.lock, when a migration from 0007 on creates a function, or when a function file
// changed without a build; a build moves the set's revision on. Each case runs the script with
// `--root` on a copy of lib/durable/store in a temporary directory: the real tree is never touched.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
const STORE = "lib/durable/store";
const SLOW = 120_000; // these cases boot PGlite for the schema snapshot
let root: string;

function run(...flags: string[]): { status: number | null; output: string } {
  const result = spawnSync(TSX, [path.join(REPO, "scripts/build-sql-module.ts"), ...flags, "--root", root], {
    encoding: "utf8",
  });
  return { status: result.status, output: result.stdout + result.stderr };
}
const file = (rel: string) => path.join(root, STORE, rel);
const read = (rel: string) => readFileSync(file(rel), "utf8");
const edit = (rel: string, change: (text: string) => string) => writeFileSync(file(rel), change(read(rel)));

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), "durable-sql-module-"));
  cpSync(path.join(REPO, STORE), path.join(root, STORE), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

it(
  "passes on an unchanged copy of the tree",
  () => {
    const result = run("--check");
    expect(result.output).toContain("SQL module current");
    expect(result.status).toBe(0);
  },
  SLOW,
);

it("fails when a shipped migration changed, naming it, in a check and in a build", () => {
  const real = readFileSync(path.join(REPO, STORE, "migrations/0004_scale_out.sql"), "utf8");
  edit("migrations/0004_scale_out.sql", (text) => text.replace("limit p_cap", "limit p_cap + 1"));
  for (const flags of [["--check"], []]) {
    const result = run(...flags);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(`${STORE}/migrations/0004_scale_out.sql changed after it shipped`);
  }
  expect(readFileSync(path.join(REPO, STORE, "migrations/0004_scale_out.sql"), "utf8")).toBe(real);
});

it("fails when a migration is missing from the lock, or a listed one is gone", () => {
  writeFileSync(file("migrations/0099_later.sql"), "alter table durable_runs add column later text;\n");
  unlinkSync(file("migrations/0003_run_streams.sql"));
  const result = run("--check");
  expect(result.status).not.toBe(0);
  expect(result.output).toContain(`${STORE}/migrations/0099_later.sql is missing from ${STORE}/migrations.lock`);
  expect(result.output).toContain(`${STORE}/migrations/0003_run_streams.sql is listed in ${STORE}/migrations.lock`);
});

it("fails when a migration from 0007 on creates a function", () => {
  writeFileSync(file("migrations/0099_later.sql"), "create or replace function durable_x() returns int\n");
  const result = run();
  expect(result.status).not.toBe(0);
  expect(result.output).toContain(`${STORE}/migrations/0099_later.sql creates a function`);
});

it(
  "a changed function file fails the check until a build, which moves the revision on once",
  () => {
    const revision = () => Number(/^revision (\d+)$/m.exec(read("sql/functions.lock"))![1]);
    const before = revision();
    edit("sql/functions/durable_inline_limit.sql", (text) => text.replace("select 65536", "select 65535"));
    const check = run("--check");
    expect(check.status).not.toBe(0);
    expect(check.output).toContain(`${STORE}/sql/functions/ changed since the last build`);

    expect(run().status).toBe(0);
    expect(revision()).toBe(before + 1);
    expect(read("migrations.generated.ts")).toContain(`"revision": ${before + 1},`);
    expect(read("schema.snapshot.sql")).toContain("select 65535");
    const again = run(); // the build left everything current: nothing to write, the revision stays
    expect(again.output).toContain(`wrote nothing (functions@${before + 1})`);
    expect(revision()).toBe(before + 1);
  },
  SLOW * 2,
);
