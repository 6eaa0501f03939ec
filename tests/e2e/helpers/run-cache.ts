// What several end-to-end files would each make the same way, made once: the package this tree
// packs, and the app create-next-app wrote with its `npm install` done. Each entry sits in a folder
// named after the content hash of what it is made from (an edit makes a new one), made under a lock
// (two files may ask at once) and marked done only once complete.
//
//   const tarball = await packedTarball();                  // `npm run pack` of this tree
//   await npmInstallFixture(app, "create-next-app-16");     // app = copyFixture(…): its first install
//
// The tarball's folder is kept in the temp dir between runs: the same sources pack to the same
// package. The installs live in the run's own folder (tests/e2e/helpers/run-dir.ts): each run
// installs from the registry as a new user would that day.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { type FixtureName, npm, npmInstall } from "./fixture-app";
import { contentHash, REPO_ROOT, withBuildLock } from "./next-server";

/** What `npm run pack` reads (scripts/pack.ts): the toolkit, the script, its config and the compiler. */
const PACK_INPUTS = [
  "lib/durable",
  "scripts/pack.ts",
  "scripts/pack",
  "package.json",
  "package-lock.json",
  "tsconfig.pack.json",
  "LICENSE",
];
const DONE = ".done";

/** The folder `parent/name`, made by `make` once; a later call (in this run, or a later one's temp dir) finds it. */
async function cached(parent: string, name: string, make: (dir: string) => Promise<void>): Promise<string> {
  const dir = path.join(parent, name);
  return withBuildLock(dir, async () => {
    if (existsSync(path.join(dir, DONE))) return dir;
    rmSync(dir, { recursive: true, force: true }); // a make that failed or was killed half-way
    mkdirSync(dir, { recursive: true });
    await make(dir);
    writeFileSync(path.join(dir, DONE), "");
    return dir;
  });
}

/** `npm run pack` of this tree, once per content of its inputs; resolves with the tarball's path. */
export async function packedTarball(): Promise<string> {
  const name = `durable-next-pack-${contentHash(REPO_ROOT, PACK_INPUTS).slice(0, 16)}`;
  const dir = await cached(os.tmpdir(), name, async (out) => {
    await npm(REPO_ROOT, ["run", "--silent", "pack", "--", "--out", out]);
  });
  const tarballs = readdirSync(dir).filter((file) => /^durable-next-.*\.tgz$/.test(file));
  if (tarballs.length !== 1) throw new Error(`${dir} should hold one durable-next-*.tgz, not ${tarballs}`);
  return path.join(dir, tarballs[0]!);
}

/**
 * The fixture's first `npm install` in `app` (a copyFixture of `name`): its node_modules and lock
 * file, installed once per run and fixture content, then copied in (a real copy: a later
 * `npm install` in the app must not write into the cache).
 */
export async function npmInstallFixture(app: string, name: FixtureName): Promise<void> {
  const fixture = path.join(REPO_ROOT, "tests/fixtures/apps", name);
  const key = `${name}-${contentHash(fixture, [""]).slice(0, 16)}`;
  const installed = await cached(inject("e2eRunDir"), key, async (dir) => {
    cpSync(fixture, dir, { recursive: true });
    await npmInstall(dir);
  });
  const files = ["node_modules", "package-lock.json"].map((rel) => path.join(installed, rel));
  const copied = spawnSync("cp", ["-a", ...files, app], { encoding: "utf8" });
  if (copied.status !== 0) throw new Error(`could not copy the install of ${name}: ${copied.stderr}`);
}
