// `durable-next init [dir] [--dry-run]`: makes a Next.js app use the installed package. It writes
// the route files under app/api/durable and app/durable.ts (the workflow registry), adds the cron
// to vercel.json, PGlite and the dev origins to next.config, .durable/ to .gitignore and a new
// instrumentation file that starts the local cron; then prints what to install and set, and where
// to register workflows (docs/guide/installing.md). A file it did not write is never overwritten;
// what it wrote is recorded with its SHA-256 in .durable-next.json, so running it again changes
// nothing, and after an upgrade it replaces only the files the app left as they were.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { aliasReachesApp, detectLayout, isTypeScript } from "./app-layout";
import { addDevCron, type ConfigChange, DURABLE_CRON, ignoreDurableDir, mergeVercelCron } from "./config-edits";
import { type FileHashes, INIT_RECORD, readInitRecord, sameEntries, sha256, writeInitRecord } from "./manifest";
import { editNextConfig } from "./next-config";
import { existingSecrets } from "./env-secrets";
import { baseUrlStep, databaseStep, printSteps, providerWebhooksStep, secretsStep, workflowStep } from "./next-steps";
import { PACKAGE_NAME } from "./package-info";
import { reportConfig, reportWrites } from "./report";
import { routeFiles } from "./route-files";
import { instanceFile } from "./templates";
import { UsageError } from "./usage";
import { installAdvice, type PackageJson } from "./versions";
import { type PlannedWrite, recordedAfter, type WriteOutcome, writeFiles } from "./write-files";

export interface InitOptions {
  /** The app's root directory. */
  target: string;
  dryRun: boolean;
  /** The package's version, recorded and advised. */
  version: string;
}

/** The app's package.json; a UsageError when the directory is not an app's root. */
function readApp(target: string): PackageJson {
  if (!existsSync(target) || !statSync(target).isDirectory()) throw new UsageError(`${target} is not a directory`);
  const file = path.join(target, "package.json");
  if (!existsSync(file)) throw new UsageError(`${target} has no package.json: give the root of a Next.js app`);
  try {
    return JSON.parse(readFileSync(file, "utf8")) as PackageJson;
  } catch (e) {
    throw new UsageError(`${file} is not valid JSON (${(e as Error).message})`);
  }
}

interface Plan {
  base: string;
  typescript: boolean;
  instance: string;
  files: PlannedWrite[];
}

/** The instance file and the route files, in the app's layout and language. */
function planFiles(target: string): Plan {
  const { base } = detectLayout(target);
  const typescript = isTypeScript(target);
  const ext = typescript ? "ts" : "js";
  const instance = `${base}app/durable.${ext}`;
  const content = instanceFile({ lib: PACKAGE_NAME, libFromWorkflows: PACKAGE_NAME, typescript });
  const routes = routeFiles(base, aliasReachesApp(target, base), ext);
  return { base, typescript, instance, files: [{ dest: instance, content }, ...routes] };
}

/** The config edits, in the order they are reported. */
function editConfig(target: string, plan: Plan, dryRun: boolean, recorded: FileHashes): ConfigChange[] {
  return [
    mergeVercelCron(target, DURABLE_CRON, dryRun),
    ...editNextConfig(target, plan.typescript, dryRun),
    ignoreDurableDir(target, dryRun),
    addDevCron(
      target,
      { base: plan.base, typescript: plan.typescript, next: `${PACKAGE_NAME}/next` },
      dryRun,
      recorded,
    ),
  ];
}

/** The record after this run: the planned files that hold our text, and the config files init wrote whole. */
function recordAfter(
  target: string,
  plan: Plan,
  outcomes: Map<string, WriteOutcome>,
  before: FileHashes,
  changes: ConfigChange[],
) {
  const files = recordedAfter(plan.files, outcomes, before);
  for (const change of changes)
    if ((change.outcome === "created" || change.outcome === "updated") && existsSync(path.join(target, change.file)))
      files[change.file] = sha256(readFileSync(path.join(target, change.file), "utf8"));
  return files;
}

interface StepsInput {
  app: PackageJson;
  plan: Plan;
  devCronFile: string;
  version: string;
  /** The app's root, where its env files are. */
  target: string;
  /** init ran here before (its record was there). */
  upgrade: boolean;
}

function printNextSteps({ app, plan, devCronFile, version, target, upgrade }: StepsInput) {
  const steps: string[] = [];
  const advice = installAdvice(app, version);
  if (advice.install.length > 0)
    steps.push(
      "Install what the app imports itself (the package brings the rest):\n" +
        `     npm install ${advice.install.join(" ")}`,
    );
  for (const warning of advice.warnings) steps.push(`Check: ${warning}`);
  steps.push(
    secretsStep(DURABLE_CRON.path, existingSecrets(target), upgrade),
    databaseStep(`DATABASE_URL=… npx ${PACKAGE_NAME} migrate`),
    baseUrlStep(),
  );
  steps.push(
    workflowStep({ defineFrom: PACKAGE_NAME, registry: plan.instance, devCronFile, cronPath: DURABLE_CRON.path }),
    providerWebhooksStep(),
  );
  steps.push(
    "Optional packages, installed by the app when it uses them: ai (6.x) for AI steps (ctx.step.ai), drizzle-orm\n" +
      `     (0.45) for Drizzle tx steps (${PACKAGE_NAME}/drizzle), @prisma/client (7.x, with a driver adapter)\n` +
      `     for Prisma tx steps (${PACKAGE_NAME}/prisma). ` +
      "To upgrade, install the new version as you installed this one\n" +
      "     (a tarball: `npm install <its .tgz>`; `npm update` never moves a tarball), then run init again:\n" +
      "     it refreshes the files it wrote that you did not change.",
  );
  printSteps(steps);
}

export function runInit({ target, dryRun, version }: InitOptions) {
  const app = readApp(target);
  const plan = planFiles(target);
  const { record, problem } = readInitRecord(target);
  const before = record?.files ?? {};
  const outcomes = writeFiles(target, plan.files, before, dryRun);
  const changes = editConfig(target, plan, dryRun, before);
  const files = recordAfter(target, plan, outcomes, before, changes);
  let recordLine = `  record: ${INIT_RECORD} unchanged`;
  if (!sameEntries(before, files)) {
    if (!dryRun) writeInitRecord(target, { version, files });
    const verb = record ? "updated" : "written";
    const done = dryRun ? `would be ${verb}` : verb;
    recordLine = `  record: ${INIT_RECORD} ${done} (the files init wrote and their SHA-256)`;
  }

  console.log(`${PACKAGE_NAME} ${version} init → ${target}${dryRun ? " (dry run: nothing written)" : ""}`);
  if (problem) console.log(`! ${problem}: treated as missing (files init wrote before count as yours)`);
  console.log(`\nFiles`);
  reportWrites(outcomes, dryRun);
  console.log(recordLine);
  if (outcomes.get(plan.instance) === "kept") {
    console.log(`  ! ${plan.instance} was already there: the route files import { routes } from it, so it must export`);
    console.log(`    routes = createDurableRoutes(getDurable, …) from ${PACKAGE_NAME}/next.`);
  }
  reportConfig(changes, dryRun);
  const devCron = changes[changes.length - 1]!;
  printNextSteps({ app, plan, devCronFile: devCron.file, version, target, upgrade: record !== null });
}
