// `durable-next runs ls|get|cancel|retry|fork` (docs/guide/cli.md): the operator's calls of the
// instance (`list`, `status`, `cancel`, `retry`, `fork`) from a terminal, over DATABASE_URL, or,
// unset, over the app's embedded PGlite in ./.durable/ as `next dev` uses it. The instance has no
// workflows unless --workflows names the module that exports them: every command but fork works
// without them, and fork refuses, saying so. Nothing is migrated: the app or `durable-next
// migrate` does that. Exit codes: 0 done; 1 refused or failed (no such run, a state conflict, a
// key that is not configured, the database unreachable); 2 bad usage, or a value the toolkit
// refuses (InvalidInputError). Errors go to stderr as one line (the stack too with DEBUG set).
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Durable, DurableOptions } from "../index";
import { redactedUrl } from "./migrate";
import type { RunsCommand } from "./runs-args";
import { listText, type StatusView, type SummaryView, statusText } from "./runs-output";

type Workflows = DurableOptions["workflows"];

/** How long the database may take to answer before the command gives up. */
const ANSWER_WITHIN_MS = 30_000;

export interface RunsResult {
  code: 0 | 1 | 2;
  stdout: string;
  stderr: string;
}

/** A usage problem found before the database is opened: exit code 2. */
class RunsUsage extends Error {}

/** Which database: DATABASE_URL, else the app's embedded one under `cwd`, which must exist. */
function databaseOf(env: NodeJS.ProcessEnv, cwd: string): { url: string | undefined; where: string } {
  const url = env.DATABASE_URL?.trim();
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new RunsUsage(`DATABASE_URL is not a postgres:// or postgresql:// URL (${redactedUrl(url)})`);
    }
    return { url, where: redactedUrl(url) };
  }
  const dir = path.join(cwd, ".durable", "pglite");
  if (!existsSync(dir)) {
    throw new RunsUsage(
      `DATABASE_URL is not set and ${dir} does not exist: set DATABASE_URL, or run this in the app's ` +
        "directory (where next dev keeps its embedded database)",
    );
  }
  return { url: undefined, where: dir };
}

/** The `workflows` (or default) export of the module --workflows names. */
async function loadWorkflows(file: string | undefined, cwd: string): Promise<Workflows> {
  if (file === undefined) return [];
  const full = path.resolve(cwd, file);
  let mod: { workflows?: unknown; default?: unknown };
  try {
    mod = await import(pathToFileURL(full).href);
  } catch (e) {
    throw new RunsUsage(`--workflows ${file}: cannot import it (${oneLine(e)})`);
  }
  const list = Array.isArray(mod.workflows) ? mod.workflows : mod.default;
  if (!Array.isArray(list)) throw new RunsUsage(`--workflows ${file}: it exports no "workflows" array`);
  return list as Workflows;
}

const oneLine = (e: unknown) => ((e as Error)?.message || String(e)).replace(/\s*\n\s*/g, " ");

/** Drops the warning every run of an unloaded workflow gets here: the terminal is not a deployment. */
function withoutRegistryWarning<T extends { warnings: string[] }>(run: T, loaded: boolean): T {
  if (loaded) return run;
  const warnings = run.warnings.filter((w) => !/ is not registered in this deployment; /.test(w));
  return { ...run, warnings };
}

/** The call a command makes, and what it prints: the answer as JSON, or text for a person. */
async function execute(durable: Durable, command: RunsCommand, loaded: boolean): Promise<string> {
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const id = command.id!;
  switch (command.verb) {
    case "ls": {
      const page = await durable.list(command.list as Parameters<Durable["list"]>[0]);
      const shown = { ...page, runs: page.runs.map((r) => withoutRegistryWarning(r, loaded)) };
      return command.json ? json(shown) : listText(shown as { runs: SummaryView[]; nextCursor: string | null });
    }
    case "get": {
      const status = await durable.status(id);
      if (!status) throw Object.assign(new Error(`run "${id}" not found`), { name: "RunNotFoundError" });
      const shown = withoutRegistryWarning(status, loaded);
      return command.json ? json(shown) : statusText(shown as StatusView, command.steps);
    }
    case "cancel": {
      const options = { reason: command.reason, children: command.keepChildren ? "keep" : "cancel" } as const;
      const status = withoutRegistryWarning(await durable.cancel(id, options), loaded);
      return command.json ? json(status) : `cancelled ${id}`;
    }
    case "retry": {
      const status = withoutRegistryWarning(await durable.retry(id), loaded);
      return command.json ? json(status) : `retried ${id}: ${status.status}`;
    }
    case "fork":
      return fork(durable, command, loaded);
  }
}

async function fork(durable: Durable, command: RunsCommand, loaded: boolean): Promise<string> {
  const id = command.id!;
  const fromStep = command.fromStep!;
  try {
    const forked = await durable.fork(id, {
      fromStep,
      ...(command.forkId === undefined ? {} : { id: command.forkId }),
    });
    const answer = { id: forked.id, created: forked.created, forkedFrom: { runId: id, stepId: fromStep } };
    if (command.json) return JSON.stringify(answer, null, 2);
    return `${forked.created ? "forked" : "already forked"} ${id} from step ${fromStep} as ${forked.id}`;
  } catch (e) {
    if (loaded || !/ is not registered in this deployment/.test((e as Error)?.message ?? "")) throw e;
    throw Object.assign(
      new Error(
        `${(e as Error).message}; a fork needs the app's definitions: give --workflows <module> ` +
          '(a module that exports the app\'s "workflows" array)',
      ),
      { name: "RunStateConflictError" },
    );
  }
}

/** Exit code 2 for a value the toolkit refuses, 1 for every other failure. */
const codeOf = (e: unknown): 1 | 2 => ((e as Error)?.name === "InvalidInputError" ? 2 : 1);

function failure(command: RunsCommand, e: unknown, url: string | undefined, where: string): RunsResult {
  let message = oneLine(e);
  if (url) message = message.split(url).join(where);
  if ((e as { code?: string })?.code === "42P01")
    message += ` (${where} has no durable tables: run durable-next migrate)`;
  const stack = process.env.DEBUG ? `\n${(e as Error)?.stack ?? ""}` : "";
  return { code: codeOf(e), stdout: "", stderr: `durable-next runs ${command.verb}: ${message}${stack}` };
}

/** Runs one `runs` command; never throws. */
export async function runRuns(
  command: RunsCommand,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<RunsResult> {
  let database: { url: string | undefined; where: string };
  let workflows: Workflows;
  try {
    database = databaseOf(env, cwd);
    workflows = await loadWorkflows(command.workflows, cwd);
  } catch (e) {
    return { code: 2, stdout: "", stderr: `durable-next runs ${command.verb}: ${oneLine(e)}` };
  }
  const { connect, createDurable } = await import("../index");
  let db: Awaited<ReturnType<typeof connect>> | undefined;
  let durable: Durable | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    db = await connect(database.url);
    durable = createDurable({ db, workflows });
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS / 1000} s`)), ANSWER_WITHIN_MS);
    });
    const stdout = await Promise.race([execute(durable, command, workflows.length > 0), late]);
    return { code: 0, stdout, stderr: "" };
  } catch (e) {
    return failure(command, e, database.url, database.where);
  } finally {
    clearTimeout(timer);
    // close() destroys the db (and gives back the embedded database's lock).
    await (durable ? durable.close() : db?.destroy())?.catch(() => {});
  }
}
