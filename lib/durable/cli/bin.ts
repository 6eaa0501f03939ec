#!/usr/bin/env node
// The `durable-next` command (the package's bin): `durable-next init [dir] [--dry-run]` and
// `durable-next migrate`. Exit code 0 when done (files kept as the app's own are reported, not an
// error), 2 on bad usage (and migrate without DATABASE_URL), 1 when something failed on the way
// (migrate: the database unreachable, a migration failed).
import path from "node:path";
import { runInit } from "./init";
import { runMigrate } from "./migrate";
import { packageVersion } from "./package-info";
import { parseArgs, USAGE, UsageError } from "./usage";

async function main(argv: string[]): Promise<number> {
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
