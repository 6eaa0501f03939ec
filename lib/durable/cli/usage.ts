// The `durable-next` command's words: `init [dir] [--dry-run]`, `migrate`, `runs …` (its words are
// runs-args.ts's), `--help`, `--version`. Bad usage is a UsageError, which the command prints (with
// the usage, but for `runs`: one line) and answers with exit code 2.

export const USAGE = `usage: durable-next init [dir] [--dry-run]
       durable-next migrate
       durable-next runs ls|get|cancel|retry|fork [options] [--json]

  init       writes the durable routes, app/durable.ts, the cron in vercel.json, the local cron in
             instrumentation.ts and the next.config settings into the Next.js app in dir (default:
             the current directory); never over a file it did not write
  --dry-run  prints what init would do and writes nothing
  migrate    migrates the database DATABASE_URL names to this version (a deploy step; the app also
             migrates on first use); exit code 1 when it cannot reach the database or a migration fails
  runs       reads and acts on the runs of the database DATABASE_URL names (unset: the app's
             embedded database in ./.durable/), one JSON document with --json:
    ls [--workflow w] [--status s[,s]] [--tag t] [--version v] [--parent id] [--metadata json]
       [--created-after date] [--created-before date] [--before-patch id] [--limit n] [--cursor c]
                                  a page of runs, newest first; --status may be given again
    get <id> [--steps]            the run's status (and its steps)
    cancel <id> [--reason text] [--keep-children]
    retry <id>                    a failed run, keeping its completed steps
    fork <id> --from-step <step> [--id <new id>] --workflows <module>
                                  a new run from before that step; needs the module that
                                  exports the app's workflows (--workflows works with every command)
             exit code 0 done, 1 refused or failed (no such run, a state conflict, a missing
             encryption key, the database unreachable), 2 bad usage or a value refused
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
