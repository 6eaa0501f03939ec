// `npm run add-to-app -- <dir> [--update] [--dry-run]`: adds the durable toolkit to another Next.js app.
//
// Copies one folder, lib/durable (the engine with its SQL migrations, generated SQL module and
// table types), the route files of app/api/durable with their imports made relative, and an
// app/durable.ts instance with an empty workflow registry; the app's db/ is never written. A file
// that already exists is never overwritten (it is reported, and running this twice changes
// nothing). What it writes is recorded with its SHA-256 in lib/durable/.add-to-app.json, so that
// `--update` can later replace the files the app did not change and print a diff for the others
// (scripts/add-to-app/update.ts). vercel.json gets the cron, next.config the PGlite entry and the
// dev origins, .gitignore the .durable/ folder, a new instrumentation.ts the local cron for `next
// dev`, when those edits are plain; otherwise the step is printed. Those edits, the templates and
// the closing steps are lib/durable/cli's, shared with the package's `durable-next init`.
// Then prints what to install, which secrets to set and where to register workflows.
// Exit code: 0 when done (files kept with a diff included: the output says so), 2 on bad usage.
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  addDevCron,
  DURABLE_CRON,
  ignoreDurableDir,
  mergeVercelCron,
  type ConfigChange,
} from "../lib/durable/cli/config-edits";
import { editNextConfig } from "../lib/durable/cli/next-config";
import { existingSecrets } from "../lib/durable/cli/env-secrets";
import { databaseStep, printSteps, secretsStep, workflowStep } from "../lib/durable/cli/next-steps";
import { reportConfig } from "../lib/durable/cli/report";
import { adviseDependencies, type PackageJson } from "./add-to-app/dependencies";
import {
  type Manifest,
  manifestPath,
  manifestText,
  readManifest,
  sameEntries,
  sha256,
  toolkitVersion,
  writeManifest,
} from "./add-to-app/manifest";
import {
  detectLayout,
  packagesUsed,
  OPTIONAL_PACKAGES,
  planFiles,
  writePlan,
  type FileOutcome,
  type PlannedFile,
} from "./add-to-app/plan";
import {
  applyUpdate,
  oldLayoutCopies,
  planUpdate,
  reportDiffs,
  reportUpdate,
  type UpdateAction,
} from "./add-to-app/update";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const USAGE = "usage: npm run add-to-app -- <path to a Next.js app> [--update] [--dry-run]";
const OPTIONS = ["--dry-run", "--update"];
/** What the copied files come from: the version stamp says whether these had uncommitted changes. */
const SOURCES = ["lib/durable", "app/api/durable", "scripts/add-to-app"];

function fail(message: string): never {
  console.error(`add-to-app: ${message}\n${USAGE}`);
  process.exit(2);
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;

function parseArgs(argv: string[]) {
  const dryRun = argv.includes("--dry-run");
  const update = argv.includes("--update");
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
    process.exit(0);
  }
  const unknown = argv.filter((a) => a.startsWith("-") && !OPTIONS.includes(a));
  if (unknown.length > 0) fail(`unknown option ${unknown.join(", ")}`);
  const dirs = argv.filter((a) => !a.startsWith("-"));
  if (dirs.length !== 1) fail("give exactly one app directory");
  return { target: path.resolve(dirs[0]!), dryRun, update };
}

function checkTarget(target: string): PackageJson & { name?: string } {
  if (!existsSync(target) || !statSync(target).isDirectory()) fail(`${target} is not a directory`);
  if (realpathSync(target) === realpathSync(ROOT)) fail("that is this repository itself");
  const pkgFile = path.join(target, "package.json");
  if (!existsSync(pkgFile)) fail(`${target} has no package.json: give the root of a Next.js app`);
  try {
    return readJson(pkgFile);
  } catch (e) {
    fail(`${pkgFile} is not valid JSON (${(e as Error).message})`);
  }
}

function reportFiles(planned: PlannedFile[], outcomes: Map<string, FileOutcome>, base: string, dryRun: boolean) {
  const verb = (o: FileOutcome) =>
    o === "created" ? (dryRun ? "would create" : "created") : o === "same" ? "already there" : "kept as is";
  const toolkit = planned.filter((f) => f.group === "toolkit");
  const counts = new Map<FileOutcome, number>();
  for (const f of toolkit) counts.set(outcomes.get(f.dest)!, (counts.get(outcomes.get(f.dest)!) ?? 0) + 1);
  console.log(`\nFiles`);
  console.log(`  ${base}lib/durable/: ${[...counts].map(([o, n]) => `${n} ${verb(o)}`).join(", ")}`);
  for (const f of toolkit)
    if (outcomes.get(f.dest) === "kept")
      console.log(`    kept as is (differs from this version, not overwritten): ${f.dest}`);
  for (const f of planned.filter((p) => p.group !== "toolkit")) {
    const outcome = outcomes.get(f.dest)!;
    const note = outcome === "kept" ? " (exists and differs: not overwritten)" : "";
    console.log(`  ${verb(outcome).padEnd(13)} ${f.dest}${note}`);
  }
  if (toolkit.some((f) => outcomes.get(f.dest) === "kept")) {
    console.log(`  ! Some toolkit files differ from this version and were left as they are. To take this version,`);
    console.log(`    run add-to-app again with --update (--dry-run first): it replaces the files your app did not`);
    console.log(`    change and prints a diff for the others.`);
  }
  const instance = planned.find((f) => f.group === "instance")!;
  if (outcomes.get(instance.dest) === "kept") {
    console.log(`  ! ${instance.dest} was already there: the route files import { routes } from it, so it must export`);
    console.log(`    routes = createDurableRoutes(getDurable, …) (see this repository's app/durable.ts).`);
  }
}

/**
 * The manifest after a plain run: what it wrote, what already equals this version, and the earlier
 * entries of the files it left alone (still what an earlier add-to-app wrote there).
 */
function plainRunEntries(planned: PlannedFile[], outcomes: Map<string, FileOutcome>, old: Manifest | null) {
  const files = { ...old?.files };
  for (const f of planned) if (outcomes.get(f.dest) !== "kept") files[f.dest] = sha256(f.content);
  return files;
}

/** Writes the manifest when `write` says so and its entries changed; returns what to print. */
function saveManifest(
  target: string,
  base: string,
  files: Record<string, string>,
  old: Manifest | null,
  write: boolean,
  dryRun: boolean,
) {
  const where = manifestPath(base);
  if (!write || (old && sameEntries(old.files, files))) return `  manifest: ${where} unchanged`;
  if (dryRun) return `  manifest: ${where} would be ${old ? "updated" : "written"}`;
  writeManifest(target, base, manifestText(toolkitVersion(ROOT, SOURCES), files));
  return `  manifest: ${where} ${old ? "updated" : "written"} (the files add-to-app wrote and their SHA-256)`;
}

function reportOldLayout(copies: string[]) {
  if (copies.length === 0) return;
  console.log("\nOld copies in db/");
  console.log(`  Earlier versions of add-to-app copied the toolkit's SQL into db/. The toolkit no longer uses these`);
  console.log(`  files (its migrations, SQL module and table types now live in lib/durable/store), so they can be`);
  console.log(`  deleted once nothing of yours imports them. db/ is your app's: add-to-app left them as they are.`);
  for (const file of copies) console.log(`    ${file}`);
}

function reportLeftOut(files: string[]) {
  if (files.length === 0) return;
  console.log(
    `  left out, since the app does not list ${OPTIONAL_PACKAGES.join(" or ")} (install it and run add-to-app`,
  );
  console.log(`  again to add them): ${files.join(", ")}`);
}

/** What the app's developer does next: installs, checks, and for a first copy, secrets and a workflow. */
function printNextSteps({
  deps,
  typescript,
  update,
  base,
  target,
  cronPath,
  manifest,
  devCronFile,
}: {
  deps: ReturnType<typeof adviseDependencies>;
  typescript: boolean;
  update: boolean;
  base: string;
  target: string;
  cronPath: string;
  manifest: ReturnType<typeof readManifest>["manifest"];
  devCronFile: ReturnType<typeof addDevCron>["file"];
}): void {
  const steps: string[] = [];
  if (deps.install.length > 0)
    steps.push(
      "Install the runtime packages (the versions this toolkit is tested with):\n" +
        `     npm install -E ${deps.install.join(" ")}`,
    );
  if (deps.installDev.length > 0)
    steps.push(
      `Install their types (the copied code is TypeScript):\n     npm install -D -E ${deps.installDev.join(" ")}`,
    );
  if (!typescript)
    steps.push(
      "The toolkit is TypeScript: install typescript and add a tsconfig.json " +
        "(next build writes one when typescript is installed).",
    );
  for (const warning of deps.warnings) steps.push(`Check: ${warning}`);
  if (update) {
    steps.push(
      [
        `New migrations come as new numbered files in ${base}lib/durable/store/migrations (never edits of applied`,
        "     ones): the first request migrates the database, or run durable.migrate() where you deploy.",
      ].join("\n"),
    );
    steps.push("Review the diffs above (if any), then build and run your tests.");
    printSteps(steps);
    return;
  }
  // Fresh secret values only for an app that has none and never had a copy here (env-secrets.ts).
  steps.push(secretsStep(cronPath, existingSecrets(target), manifest !== null), databaseStep());
  steps.push(
    workflowStep({
      defineFrom: `${base}lib/durable`,
      registry: `${base}app/durable.ts`,
      devCronFile: devCronFile,
      cronPath: cronPath,
    }),
  );
  printSteps(steps);
}

function main() {
  const { target, dryRun, update } = parseArgs(process.argv.slice(2));
  const theirs = checkTarget(target);
  const ours = readJson<PackageJson>(path.join(ROOT, "package.json"));
  const typescript = existsSync(path.join(target, "tsconfig.json"));
  const layout = detectLayout(target);
  const base = layout.base;

  const planned = planFiles(ROOT, layout, new Set(Object.keys({ ...theirs.devDependencies, ...theirs.dependencies })));
  const { manifest, problem } = readManifest(target, base);
  let reportPlan: () => void;
  let manifestLine: string;
  let updateActions: UpdateAction[] = [];
  if (update) {
    const { actions, files } = planUpdate(target, planned, manifest, base);
    if (!dryRun) applyUpdate(target, actions, base);
    reportPlan = () => reportUpdate(actions, base, dryRun);
    updateActions = actions;
    manifestLine = saveManifest(target, base, files, manifest, true, dryRun);
  } else {
    const outcomes = writePlan(target, planned, dryRun);
    reportPlan = () => reportFiles(planned, outcomes, base, dryRun);
    const wrote = [...outcomes.values()].includes("created");
    manifestLine = saveManifest(target, base, plainRunEntries(planned, outcomes, manifest), manifest, wrote, dryRun);
  }
  const cron = DURABLE_CRON;
  const changes: ConfigChange[] = [
    mergeVercelCron(target, cron, dryRun),
    ...editNextConfig(target, typescript, dryRun),
    ignoreDurableDir(target, dryRun),
  ];
  const devCron = addDevCron(target, { base, typescript, next: "./lib/durable/next" }, dryRun);
  changes.push(devCron);
  const deps = adviseDependencies(
    ours,
    theirs,
    // An optional package is in the plan only when the app lists it already.
    packagesUsed(planned).filter((name) => !OPTIONAL_PACKAGES.includes(name)),
  );

  console.log(`durable-next → ${target}${dryRun ? " (dry run: nothing written)" : ""}`);
  if (problem) console.log(`! ${problem}: treated as missing (--update writes a fresh one)`);
  reportPlan();
  reportLeftOut(planned.leftOut ?? []);
  console.log(manifestLine);
  reportOldLayout(oldLayoutCopies(target, base));
  reportConfig(changes, dryRun);
  reportDiffs(updateActions);

  printNextSteps({ deps, typescript, update, base, target, cronPath: cron.path, manifest, devCronFile: devCron.file });
}

main();
