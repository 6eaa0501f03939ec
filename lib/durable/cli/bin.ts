#!/usr/bin/env node
// The `durable-next` command (the package's bin): `durable-next init [dir] [--dry-run]`. Exit code
// 0 when done (files kept as the app's own are reported, not an error), 2 on bad usage, 1 when
// something failed on the way.
import path from "node:path";
import { runInit } from "./init";
import { packageVersion } from "./package-info";
import { parseArgs, USAGE, UsageError } from "./usage";

function main(argv: string[]): number {
  try {
    const command = parseArgs(argv);
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

process.exitCode = main(process.argv.slice(2));
