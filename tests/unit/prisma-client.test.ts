// The Prisma client the prismaTx tests use is committed (tests/fixtures/prisma/README.md): here it
// is generated again from its schema with the installed `prisma`, offline, and must be the same,
// file for file. After a schema change or a Prisma upgrade, regenerate it with the README's command.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";

const REPO = path.join(__dirname, "../..");
const FIXTURE = path.join(REPO, "tests/fixtures/prisma");
const work = mkdtempSync(path.join(os.tmpdir(), "durable-prisma-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every file under `dir`, relative to it, sorted. */
const filesOf = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();

it("the committed client is what `prisma generate` makes of the schema, offline", () => {
  copyFileSync(path.join(FIXTURE, "schema.prisma"), path.join(work, "schema.prisma"));
  const run = spawnSync(
    path.join(REPO, "node_modules/.bin/prisma"),
    ["generate", "--schema", path.join(work, "schema.prisma")],
    {
      cwd: REPO,
      encoding: "utf8",
      // generate runs no schema engine, but the CLI would fetch one first: point it at a stand-in.
      env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: "/bin/true", CHECKPOINT_DISABLE: "1" },
      timeout: 60_000,
    },
  );
  expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
  const fresh = path.join(work, "generated");
  const committed = path.join(FIXTURE, "generated");
  expect(filesOf(committed)).toEqual(filesOf(fresh));
  for (const file of filesOf(fresh))
    expect(
      readFileSync(path.join(committed, file), "utf8"),
      `${file}: run the command in tests/fixtures/prisma/README.md`,
    ).toBe(readFileSync(path.join(fresh, file), "utf8"));
}, 90_000);
