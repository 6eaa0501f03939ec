// The words of `durable-next runs ls|get|cancel|retry|fork` (docs/guide/cli.md): checked whole
// before anything connects, so a typo is exit code 2 and touches no database. The values a filter
// takes are checked again by the engine, as `list()` checks them; this file only reads the words.
import { UsageError } from "./usage";

export type RunsVerb = "ls" | "get" | "cancel" | "retry" | "fork";

/** `list()`'s options as words gave them (the engine checks their values). */
export interface ListWords {
  workflow?: string;
  status?: string[];
  tag?: string;
  version?: string;
  parentId?: string;
  metadata?: unknown;
  createdAfter?: string;
  createdBefore?: string;
  beforePatch?: string;
  limit?: number;
  cursor?: string;
}

export interface RunsCommand {
  command: "runs";
  verb: RunsVerb;
  /** The run of get, cancel, retry and fork. */
  id?: string;
  json: boolean;
  /** A module whose `workflows` (or default) export is the app's registry; fork needs it. */
  workflows?: string;
  list: ListWords;
  /** get: list the steps too. */
  steps: boolean;
  /** cancel */
  reason?: string;
  keepChildren: boolean;
  /** fork */
  fromStep?: string;
  forkId?: string;
}

/** Each verb's value options (flag → what it sets) and switches; --json and --workflows go with every verb. */
const VALUE_FLAGS: Record<RunsVerb, readonly string[]> = {
  ls: [
    "--workflow",
    "--status",
    "--tag",
    "--version",
    "--parent",
    "--metadata",
    "--created-after",
    "--created-before",
    "--before-patch",
    "--limit",
    "--cursor",
  ],
  get: [],
  cancel: ["--reason"],
  retry: [],
  fork: ["--from-step", "--id"],
};
const SWITCHES: Record<RunsVerb, readonly string[]> = {
  ls: [],
  get: ["--steps"],
  cancel: ["--keep-children"],
  retry: [],
  fork: [],
};
const COMMON_VALUES = ["--workflows"];
const COMMON_SWITCHES = ["--json"];
const VERBS = Object.keys(VALUE_FLAGS) as RunsVerb[];
const REPEATABLE = new Set(["--status"]);

interface Words {
  values: Map<string, string[]>;
  switches: Set<string>;
  positional: string[];
}

/** Splits `--flag value`, `--flag=value` and switches; an unknown flag or a missing value is a UsageError. */
function readWords(verb: RunsVerb, rest: string[]): Words {
  const valueFlags = [...VALUE_FLAGS[verb], ...COMMON_VALUES];
  const switches = [...SWITCHES[verb], ...COMMON_SWITCHES];
  const words: Words = { values: new Map(), switches: new Set(), positional: [] };
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.startsWith("--")) {
      words.positional.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const flag = eq < 0 ? word : word.slice(0, eq);
    if (switches.includes(flag) && eq < 0) {
      words.switches.add(flag);
      continue;
    }
    if (!valueFlags.includes(flag)) throw new UsageError(`runs ${verb}: unknown option ${flag}`);
    const value = eq < 0 ? rest[++i] : word.slice(eq + 1);
    if (value === undefined || value === "") throw new UsageError(`runs ${verb}: ${flag} needs a value`);
    const seen = words.values.get(flag) ?? [];
    if (seen.length > 0 && !REPEATABLE.has(flag)) throw new UsageError(`runs ${verb}: ${flag} is given once`);
    words.values.set(flag, [...seen, value]);
  }
  return words;
}

const one = (words: Words, flag: string) => words.values.get(flag)?.[0];

function limitOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 200) {
    throw new UsageError(`runs ls: --limit is a whole number from 1 to 200, not ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function metadataOf(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`runs ls: --metadata is a JSON object, e.g. '{"plan":"pro"}'`);
  }
}

function listWords(words: Words): ListWords {
  const statuses = (words.values.get("--status") ?? []).flatMap((s) => s.split(",")).map((s) => s.trim());
  const list: ListWords = {
    workflow: one(words, "--workflow"),
    status: statuses.length > 0 ? statuses : undefined,
    tag: one(words, "--tag"),
    version: one(words, "--version"),
    parentId: one(words, "--parent"),
    metadata: metadataOf(one(words, "--metadata")),
    createdAfter: one(words, "--created-after"),
    createdBefore: one(words, "--created-before"),
    beforePatch: one(words, "--before-patch"),
    limit: limitOf(one(words, "--limit")),
    cursor: one(words, "--cursor"),
  };
  for (const key of Object.keys(list) as (keyof ListWords)[]) if (list[key] === undefined) delete list[key];
  return list;
}

/** `runs <verb> …`: the command, or a UsageError saying what is wrong. */
export function parseRunsArgs(argv: string[]): RunsCommand {
  const [verb, ...rest] = argv;
  if (verb === undefined) throw new UsageError(`runs: say what to do: ${VERBS.join(", ")}`);
  if (!VERBS.includes(verb as RunsVerb)) {
    throw new UsageError(`runs: unknown command "${verb}" (one of ${VERBS.join(", ")})`);
  }
  const v = verb as RunsVerb;
  const words = readWords(v, rest);
  const wantsId = v !== "ls";
  if (words.positional.length > (wantsId ? 1 : 0)) {
    throw new UsageError(`runs ${v}: unexpected ${words.positional.slice(wantsId ? 1 : 0).join(" ")}`);
  }
  if (wantsId && words.positional.length === 0) throw new UsageError(`runs ${v}: give the run's id`);
  const command: RunsCommand = {
    command: "runs",
    verb: v,
    json: words.switches.has("--json"),
    list: v === "ls" ? listWords(words) : {},
    steps: words.switches.has("--steps"),
    keepChildren: words.switches.has("--keep-children"),
  };
  if (wantsId) command.id = words.positional[0];
  const optional = { workflows: "--workflows", reason: "--reason", fromStep: "--from-step", forkId: "--id" } as const;
  for (const [key, flag] of Object.entries(optional)) {
    const value = one(words, flag);
    if (value !== undefined) command[key as keyof typeof optional] = value;
  }
  if (v === "fork" && command.fromStep === undefined) {
    throw new UsageError("runs fork: give the step to start over from with --from-step <step>");
  }
  return command;
}
