// `npm run pack [-- --out <dir>]`: builds the npm package durable-next from lib/durable into
// <dir>/durable-next-<version>.tgz (default dist/, which git ignores) and prints its path and size.
//
// The package is ESM JavaScript and .d.ts for every file of lib/durable, compiled by tsc from
// tsconfig.pack.json, with every relative import specifier rewritten to its real file (./x.js,
// ./x/index.js) so it runs under plain Node and type-checks under `moduleResolution` bundler and
// nodenext; "use client" stays at the top of the react entry's files; the SQL migrations and SQL
// function files ship beside the generated module the code reads them from. package.json is made
// from what the compiled files import (scripts/pack/package-json.ts): the build fails on an import
// that is not a known dependency. The bin is the init CLI (lib/durable/cli; docs/guide/installing.md).
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { BIN, ENTRIES, packageJson, type RootPackage } from "./pack/package-json";
import { packageReadme } from "./pack/readme";
import { compiledFiles, rewriteSpecifiers, staticallyLoaded } from "./pack/specifiers";

const ROOT = path.resolve(import.meta.dirname, "..");
const SOURCE = path.join(ROOT, "lib/durable");
/** The SQL that ships as files too (the code itself reads store/migrations.generated.ts). */
const SQL_DIRS = ["store/migrations", "store/sql/functions", "store"];

function fail(problems: string[]): never {
  console.error(`pack: the package cannot be built:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" });
  if (result.status !== 0)
    fail([`${command} ${args.join(" ")} exited with ${result.status}`, result.stdout, result.stderr]);
  return result.stdout;
}

function compile(stage: string) {
  rmSync(stage, { recursive: true, force: true });
  run(path.join(ROOT, "node_modules/.bin/tsc"), ["-p", "tsconfig.pack.json", "--outDir", stage], ROOT);
}

/** Every source file that opens with "use client" opens with it compiled too (Next reads it there). */
function checkClientDirectives(stage: string): string[] {
  const problems: string[] = [];
  const directive = /^(\s*\/\/[^\n]*\n|\s*\/\*[\s\S]*?\*\/)*\s*["']use client["']/;
  for (const file of compiledFiles(stage).filter((f) => f.endsWith(".js"))) {
    const source = ["ts", "tsx"].map((ext) => path.join(SOURCE, file.replace(/\.js$/, `.${ext}`))).find(existsSync);
    if (
      source &&
      directive.test(readFileSync(source, "utf8")) &&
      !directive.test(readFileSync(path.join(stage, file), "utf8"))
    )
      problems.push(`${file} lost its "use client" directive`);
  }
  return problems;
}

function copySql(stage: string): number {
  let copied = 0;
  for (const dir of SQL_DIRS)
    for (const name of readdirSync(path.join(SOURCE, dir)).filter((n) => n.endsWith(".sql"))) {
      mkdirSync(path.join(stage, dir), { recursive: true });
      copyFileSync(path.join(SOURCE, dir, name), path.join(stage, dir, name));
      copied++;
    }
  return copied;
}

function writeManifest(stage: string, root: RootPackage) {
  const report = rewriteSpecifiers(stage);
  const problems = [...report.problems, ...checkClientDirectives(stage)];
  const entries = Object.keys(ENTRIES).filter((subpath) => existsSync(path.join(stage, `${ENTRIES[subpath]}.js`)));
  const core = staticallyLoaded(stage, "index.js");
  const { json, problems: depProblems } = packageJson({ root, seen: { ...report, core }, entries });
  problems.push(...depProblems);
  if (!existsSync(path.join(stage, BIN))) problems.push(`${BIN} was not built`);
  if (problems.length > 0) fail(problems);
  writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(path.join(stage, "README.md"), packageReadme(root.version));
  if (existsSync(path.join(ROOT, "LICENSE"))) copyFileSync(path.join(ROOT, "LICENSE"), path.join(stage, "LICENSE"));
  chmodSync(path.join(stage, BIN), 0o755);
}

function main() {
  const outFlag = process.argv.indexOf("--out");
  const out = path.resolve(outFlag > 0 ? process.argv[outFlag + 1]! : path.join(ROOT, "dist"));
  const root = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as RootPackage;
  const stage = path.join(out, "package");
  compile(stage);
  const sql = copySql(stage);
  writeManifest(stage, root);
  mkdirSync(out, { recursive: true });
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], stage)) as {
    filename: string;
    entryCount: number;
  }[];
  const tarball = path.join(out, packed[0]!.filename);
  const size = statSync(tarball).size;
  console.log(`${tarball}`);
  console.log(
    `  ${(size / 1024).toFixed(1)} KiB, ${packed[0]!.entryCount} files (${sql} SQL), ${root.name}@${root.version}`,
  );
}

main();
