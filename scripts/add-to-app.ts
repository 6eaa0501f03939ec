// `npm run add-to-app -- <dir> [--dry-run]`: adds the durable toolkit to another Next.js app.
//
// Copies lib/durable and db/ (migrations, the generated SQL module, table types), the route files
// of app/api/durable with their imports made relative, and an app/durable.ts instance with an
// empty workflow registry. A file that already exists is never overwritten (it is reported, and
// running this twice changes nothing). vercel.json gets the cron, next.config the PGlite entry,
// .gitignore the .durable/ folder, when those edits are plain; otherwise the step is printed.
// Then prints what to install, which secrets to set and where to register workflows.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  addServerExternalPackage,
  ignoreDurableDir,
  mergeVercelCron,
  type ConfigChange,
  type Cron,
} from "./add-to-app/config-edits";
import { adviseDependencies, type PackageJson } from "./add-to-app/dependencies";
import {
  detectLayout,
  packagesUsed,
  planFiles,
  writePlan,
  type FileOutcome,
  type PlannedFile,
} from "./add-to-app/plan";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const USAGE = "usage: npm run add-to-app -- <path to a Next.js app> [--dry-run]";

function fail(message: string): never {
  console.error(`add-to-app: ${message}\n${USAGE}`);
  process.exit(2);
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;

function parseArgs(argv: string[]) {
  const dryRun = argv.includes("--dry-run");
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
    process.exit(0);
  }
  const unknown = argv.filter((a) => a.startsWith("-") && a !== "--dry-run");
  if (unknown.length > 0) fail(`unknown option ${unknown.join(", ")}`);
  const dirs = argv.filter((a) => !a.startsWith("-"));
  if (dirs.length !== 1) fail("give exactly one app directory");
  return { target: path.resolve(dirs[0]!), dryRun };
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

function ourCron(): Cron {
  const crons = readJson<{ crons?: Cron[] }>(path.join(ROOT, "vercel.json")).crons ?? [];
  const cron = crons.find((c) => c.path.startsWith("/api/durable/"));
  if (!cron) throw new Error("this repository's vercel.json has no /api/durable cron");
  return cron;
}

function reportFiles(planned: PlannedFile[], outcomes: Map<string, FileOutcome>, base: string, dryRun: boolean) {
  const verb = (o: FileOutcome) =>
    o === "created" ? (dryRun ? "would create" : "created") : o === "same" ? "already there" : "kept as is";
  const toolkit = planned.filter((f) => f.group === "toolkit");
  const counts = new Map<FileOutcome, number>();
  for (const f of toolkit) counts.set(outcomes.get(f.dest)!, (counts.get(outcomes.get(f.dest)!) ?? 0) + 1);
  console.log(`\nFiles`);
  console.log(`  ${base}lib/durable/, ${base}db/: ${[...counts].map(([o, n]) => `${n} ${verb(o)}`).join(", ")}`);
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
    console.log(`    delete ${base}lib/durable and ${base}db/migrations* and run add-to-app again.`);
  }
  const instance = planned.find((f) => f.group === "instance")!;
  if (outcomes.get(instance.dest) === "kept") {
    console.log(`  ! ${instance.dest} was already there: the route files import { routes } from it, so it must export`);
    console.log(`    routes = createDurableRoutes(getDurable, …) (see this repository's app/durable.ts).`);
  }
}

function reportConfig(changes: ConfigChange[], dryRun: boolean) {
  console.log(`\nConfig`);
  for (const c of changes) {
    const verb =
      c.outcome === "manual" ? "TO DO" : dryRun && c.outcome !== "unchanged" ? `would be ${c.outcome}` : c.outcome;
    console.log(`  ${c.file.padEnd(16)} ${verb}: ${c.note}`);
  }
}

function main() {
  const { target, dryRun } = parseArgs(process.argv.slice(2));
  const theirs = checkTarget(target);
  const ours = readJson<PackageJson>(path.join(ROOT, "package.json"));
  const typescript = existsSync(path.join(target, "tsconfig.json"));
  const layout = detectLayout(target);
  const base = layout.base;

  const planned = planFiles(ROOT, layout);
  const outcomes = writePlan(target, planned, dryRun);
  const cron = ourCron();
  const changes = [
    mergeVercelCron(target, cron, dryRun),
    addServerExternalPackage(target, typescript, dryRun),
    ignoreDurableDir(target, dryRun),
  ];
  const deps = adviseDependencies(ours, theirs, packagesUsed(planned));

  console.log(`durable-next → ${target}${dryRun ? " (dry run: nothing written)" : ""}`);
  reportFiles(planned, outcomes, base, dryRun);
  reportConfig(changes, dryRun);

  const steps: string[] = [];
  if (deps.install.length > 0)
    steps.push(
      `Install the runtime packages (the versions this toolkit is tested with):\n     npm install ${deps.install.join(" ")}`,
    );
  if (deps.installDev.length > 0)
    steps.push(
      `Install their types (the copied code is TypeScript):\n     npm install -D ${deps.installDev.join(" ")}`,
    );
  if (!typescript)
    steps.push(
      "The toolkit is TypeScript: install typescript and add a tsconfig.json (next build writes one when typescript is installed).",
    );
  for (const warning of deps.warnings) steps.push(`Check: ${warning}`);
  const signal = `whsec_${randomBytes(32).toString("base64")}`;
  steps.push(
    [
      "Set the secrets (Vercel: Project → Settings → Environment Variables; locally .env.local). In production a",
      "     missing one makes its routes answer 503. Fresh values, for example:",
      `       DURABLE_SECRET=${randomBytes(24).toString("base64url")}     # admin bearer; derives each run's status token`,
      `       CRON_SECRET=${randomBytes(24).toString("base64url")}        # Vercel Cron sends it to ${cron.path}`,
      `       DURABLE_SIGNAL_SECRET=${signal}   # Standard Webhooks key(s) for POST /api/durable/signal; comma-separated to rotate`,
    ].join("\n"),
  );
  steps.push(
    [
      "Set DATABASE_URL: your Neon connection string on Vercel (Neon's driver is used for *.neon.tech hosts, or with",
      "     DURABLE_DRIVER=neon), any postgres:// URL elsewhere (node-postgres). Unset, runs live in an embedded PGlite in",
      "     ./.durable/ (local development only). The tables (durable_*) are created on first use.",
    ].join("\n"),
  );
  steps.push(
    [
      `Write a workflow (defineWorkflow from ${base}lib/durable) and register it in ${base}app/durable.ts:`,
      "       export const workflows = [welcome];",
      "     then start a run:",
      `       curl -X POST localhost:3000/api/durable/runs -H "authorization: Bearer $DURABLE_SECRET" \\`,
      `            -H "content-type: application/json" -d '{"workflow":"welcome","input":{"email":"a@example.com"}}'`,
      "     and read it with the statusToken it answers: GET /api/durable/runs/<id>, Authorization: Bearer <statusToken>.",
      "     Runs advance right after each start, signal and status read; the cron is the backstop.",
      `     (Vercel's Hobby plan allows daily crons only: there, make the schedule of ${cron.path} daily, e.g. "0 3 * * *".)`,
    ].join("\n"),
  );
  console.log(`\nNext steps`);
  for (const [i, step] of steps.entries()) console.log(`  ${i + 1}. ${step}`);
}

main();
