#!/usr/bin/env node
// The `durable-next` command (the package's bin): `durable-next init [dir] [--dry-run]`,
// `durable-next migrate` and `durable-next runs …` (runs.ts). Exit code 0 when done (files kept as
// the app's own are reported, not an error), 2 on bad usage (and migrate without DATABASE_URL), 1
// when something failed on the way (migrate: the database unreachable, a migration failed; runs:
// docs/guide/cli.md, "Exit codes").
import path from "node:path";
import { runInit } from "./init";
import { runMigrate } from "./migrate";
import { packageVersion } from "./package-info";
import { parseRunsArgs } from "./runs-args";
import { parseArgs, USAGE, UsageError } from "./usage";

/** `durable-next runs …`: its answer on stdout, an error as one line on stderr. */
async function runs(argv: string[]): Promise<number> {
  let command: ReturnType<typeof parseRunsArgs>;
  try {
    command = parseRunsArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`durable-next ${e.message} (durable-next --help lists the options)`);
    return 2;
  }
  // The toolkit loads only for this command: init stays a few Node modules.
  const { runRuns } = await import("./runs");
  const { code, stdout, stderr } = await runRuns(command);
  if (stdout) console.log(stdout);
  if (stderr) console.error(stderr);
  return code;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "runs" && !argv.includes("--help") && !argv.includes("-h")) return runs(argv.slice(1));
  try {
    const command = parseArgs(argv);
    if (command.command === "migrate") {
      const { code, message } = await runMigrate();
      if (code === 0) console.log(`durable-next migrate: ${message}`);
      else console.error(`durable-next migrate: ${message}`);
      return code;
    }
    if (command.command === "help") console.log(USAGE);
    else if (command.command === "version") console.log(packageVersion());
    else runInit({ target: path.resolve(command.dir), dryRun: command.dryRun, version: packageVersion() });
    return 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`durable-next: ${e.message}\n\n${USAGE}`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
