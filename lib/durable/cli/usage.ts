// The `durable-next` command's words: `init [dir] [--dry-run]`, `migrate`, `--help`, `--version`.
// Bad usage is a UsageError, which the command prints with the usage and answers with exit code 2.

export const USAGE = `usage: durable-next init [dir] [--dry-run]
       durable-next migrate

  init       writes the durable routes, app/durable.ts, the cron in vercel.json, the local cron in
             instrumentation.ts and the next.config settings into the Next.js app in dir (default:
             the current directory); never over a file it did not write
  --dry-run  prints what init would do and writes nothing
  migrate    migrates the database DATABASE_URL names to this version (a deploy step; the app also
             migrates on first use); exit code 1 when it cannot reach the database or a migration fails
  --help     prints this; --version prints the package version`;

/** Bad usage: a wrong word, a missing or unusable app directory. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type Command =
  | { command: "help" }
  | { command: "version" }
  | { command: "migrate" }
  | { command: "init"; dir: string; dryRun: boolean };

const INIT_OPTIONS = ["--dry-run"];

export function parseArgs(argv: string[]): Command {
  if (argv.includes("--help") || argv.includes("-h")) return { command: "help" };
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) return { command: "version" };
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError("say what to do: durable-next init");
  if (command === "migrate") {
    if (rest.length > 0)
      throw new UsageError(`migrate takes nothing more (got ${rest.join(" ")}): it reads DATABASE_URL`);
    return { command: "migrate" };
  }
  if (command !== "init") throw new UsageError(`unknown command "${command}"`);
  const unknown = rest.filter((a) => a.startsWith("-") && !INIT_OPTIONS.includes(a));
  if (unknown.length > 0) throw new UsageError(`unknown option ${unknown.join(", ")}`);
  const dirs = rest.filter((a) => !a.startsWith("-"));
  if (dirs.length > 1) throw new UsageError(`give at most one app directory (got ${dirs.join(", ")})`);
  return { command: "init", dir: dirs[0] ?? ".", dryRun: rest.includes("--dry-run") };
}
