// The layering rules are lint rules (biome.json): they must fire on a violation, not only stay
// quiet on this tree. Each case is a line of a throwaway tree linted under the repository's own
// configuration.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileIn } from "../helpers/write-file-in";

const REPO = path.join(__dirname, "../..");
const BIOME = path.join(REPO, "node_modules/.bin/biome");
const RESTRICTED = "lint/style/noRestrictedImports";

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string; start: { line: number } };
}

/** A file of lib/durable, what it imports, and the start of the message that must refuse it (null: allowed). */
type Case = [file: string, specifier: string, refusal: string | null];

// docs/layout.md, "Who imports whom".
const DIRECTIONS: Case[] = [
  ["store/a.ts", "../engine/advance", "store/ imports only"],
  ["store/a.ts", "../names", "store/ imports only"],
  ["store/a.ts", "../types", null],
  ["store/a.ts", "../errors", null],
  ["drivers/a.ts", "../store", "drivers/ imports only"],
  ["drivers/a.ts", "../types", "drivers/ imports only"],
  ["drivers/a.ts", "./connect", null],
  ["auth/a.ts", "../engine/instance", "auth/ imports only"],
  ["auth/a.ts", "../names", null],
  ["engine/a.ts", "../http/sse", "engine/ never imports"],
  ["engine/a.ts", "../react/run-poller", "engine/ never imports"],
  ["engine/a.ts", "../cli/init", "engine/ never imports"],
  ["engine/a.ts", "../index", "engine/ never imports"],
  ["engine/run/a.ts", "../../http/routes/tick", "engine/ never imports"],
  ["engine/a.ts", "../steps/retry-policy", "engine/ reaches the steps"],
  ["engine/a.ts", "../steps/effect-steps", null],
  ["engine/a.ts", "../steps/step-api", null],
  ["engine/run/a.ts", "../../steps/wait-steps", "engine/ reaches the steps"],
  ["engine/a.ts", "../drivers/embedded", "engine/ uses drivers/connect.ts"],
  ["engine/a.ts", "../drivers/connect", null],
  ["engine/a.ts", "../store", null],
  ["engine/a.ts", "../auth/secrets", null],
  ["steps/a.ts", "../engine/advance", "steps/ reach the engine"],
  ["steps/a.ts", "../engine/run/execution", "steps/ reach the engine"],
  ["steps/a.ts", "../engine/run/step-recorder", "steps/ reach the engine"],
  ["steps/a.ts", "../engine/run/step-host", null],
  ["steps/a.ts", "../engine/wings", null],
  ["steps/a.ts", "../http/sse", "steps/ never import"],
  ["steps/a.ts", "../drivers/connect", "steps/ never import"],
  ["steps/a.ts", "../testing", "steps/ never import"],
  ["steps/a.ts", "../store", null],
  ["http/a.ts", "../store", "http/ maps requests"],
  ["http/routes/a.ts", "../../steps/effect-steps", "http/ maps requests"],
  ["http/routes/a.ts", "../../engine/start", "http/ takes from engine/"],
  ["http/routes/a.ts", "../../engine/create-durable", null],
  ["http/a.ts", "../auth/secrets", null],
  ["react/a.ts", "../engine/create-durable", "react/ runs in the browser"],
  ["react/a.ts", "../auth/status-token", "react/ runs in the browser"],
  ["react/a.ts", "../schemas", null],
  ["cli/a.ts", "../index", "cli/ runs in a terminal"],
  ["cli/a.ts", "../errors", "cli/ runs in a terminal"],
  ["cli/migrate.ts", "../index", null],
  ["cli/migrate.ts", "../errors", "cli/ runs in a terminal"],
  ["types.ts", "./errors", "types.ts, signal-types.ts, schemas.ts and text.ts"],
  ["text.ts", "./names", "types.ts, signal-types.ts, schemas.ts and text.ts"],
  ["signal-types.ts", "./types", "types.ts, signal-types.ts, schemas.ts and text.ts"],
  ["types.ts", "./signal-types", null],
  ["names.ts", "./json", "errors.ts, duration.ts, json.ts and names.ts"],
  ["names.ts", "./text", null],
  ["next.ts", "./index", "An entry point never imports another"],
  ["next.ts", "./http/routes/create-durable-routes", null],
  ["react.ts", "./engine/create-durable", "react.ts and ai-react.ts, the client entries"],
  ["react.ts", "./react/run-poller", null],
  ["react.ts", "./ai/turn-end", null],
  ["ai-react.ts", "./ai/chat-turns", "react.ts and ai-react.ts, the client entries"],
  ["ai-react.ts", "./ai/react/durable-chat-transport", null],
  ["ai.ts", "./index", "An entry point never imports another"],
  ["ai/a.ts", "../drivers/connect", "ai/ builds on the core"],
  ["ai/http/a.ts", "../../index", "ai/ builds on the core"],
  ["ai/a.ts", "../engine/wings", null],
  ["ai/http/a.ts", "../../http/sse", null],
];

// The AI wing, lib/durable/ai/: the core knows it only by what it registers.
const AI_WING: Case[] = [
  ["engine/b.ts", "../ai/agent", "Only ai/ and the entry points import ai/"],
  ["steps/b.ts", "../ai", "Only ai/ and the entry points import ai/"],
  ["http/routes/b.ts", "../../ai/chat", "Only ai/ and the entry points import ai/"],
  ["react/b.ts", "../ai/chat", "Only ai/ and the entry points import ai/"],
  ["store/b.ts", "../ai/agent", "store/ imports only"],
  ["auth/b.ts", "../ai", "auth/ imports only"],
  ["types.ts", "./ai/agent", "types.ts, signal-types.ts, schemas.ts and text.ts"],
  ["index.ts", "./ai/agent", null],
  ["react.ts", "./ai/react/durable-chat-transport", null],
];

// Every folder or group of top-level files with a directions override of its own: an override
// replaces the rule's options, so each must carry the ban on kysely's sql again.
const SQL_IMPORTS: Case[] = [
  ...["engine", "engine/run", "steps", "ai", "ai/http", "http", "http/routes", "drivers", "auth", "react", "cli"].map(
    (folder): Case => [`${folder}/sql.ts`, "kysely", "Only lib/durable/store/ writes SQL"],
  ),
  ...["cli/migrate.ts", "schemas.ts", "duration.ts", "testing.ts", "react.ts", "ai.ts", "ai-react.ts"].map(
    (file): Case => [file, "kysely", "Only lib/durable/store/ writes SQL"],
  ),
  ["store/sql.ts", "kysely", null],
];

let dir: string;
/** The noRestrictedImports messages Biome reported, by "file:line". */
const refusals = new Map<string, string[]>();
let cycles: string[] = [];
/** Where each case was written: "file:line" under lib/durable. */
const placed = new Map<Case, string>();

const write = (rel: string, content: string) => writeFileIn(dir, rel, content);

/** Biome's JSON report over the throwaway tree. */
function lint(): Diagnostic[] {
  let out: string;
  try {
    out = execFileSync(BIOME, ["lint", "--reporter=json", "--max-diagnostics=none", "."], {
      cwd: dir,
      encoding: "utf8",
      stdio: "pipe",
    });
  } catch (error) {
    out = (error as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { diagnostics: Diagnostic[] }).diagnostics;
}

/** Writes the cases, a line each, `import … from` (or, in cli/migrate.ts, `import()` as the real one does). */
function plant(cases: Case[]) {
  const lines = new Map<string, string[]>();
  for (const entry of cases) {
    const [file, specifier] = entry;
    const own = lines.get(file) ?? [];
    const name = `m${own.length}`;
    own.push(
      specifier === "kysely"
        ? `import { sql as ${name} } from "kysely";`
        : file === "cli/migrate.ts"
          ? `export const ${name} = () => import("${specifier}");`
          : `export * as ${name} from "${specifier}";`,
    );
    lines.set(file, own);
    placed.set(entry, `lib/durable/${file}:${own.length}`);
  }
  for (const [file, own] of lines) write(`lib/durable/${file}`, `${own.join("\n")}\n`);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "durable-lint-"));
  const config = JSON.parse(readFileSync(path.join(REPO, "biome.json"), "utf8"));
  delete config.$schema;
  config.vcs = { enabled: false };
  write("biome.json", JSON.stringify(config));
  plant([...DIRECTIONS, ...AI_WING, ...SQL_IMPORTS]);
  write("lib/durable/steps/c.ts", 'import { d } from "./d";\n\nexport const c = () => d();\n');
  write("lib/durable/steps/d.ts", 'import { c } from "./c";\n\nexport const d = () => c;\n');
  write("lib/durable/engine/e.ts", 'import type { F } from "./f";\n\nexport type E = { f?: F };\n');
  write("lib/durable/engine/f.ts", 'import type { E } from "./e";\n\nexport type F = { e?: E };\n');
  const diagnostics = lint();
  for (const { message, location } of diagnostics.filter((d) => d.category === RESTRICTED)) {
    const at = `${location.path}:${location.start.line}`;
    refusals.set(at, [...(refusals.get(at) ?? []), message]);
  }
  cycles = diagnostics.filter((d) => d.category === "lint/suspicious/noImportCycles").map((d) => d.location.path);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each case refused with its own message, or, when allowed, not refused at all. */
function expectCases(cases: Case[]) {
  const wrong = cases.flatMap((entry) => {
    const [file, specifier, refusal] = entry;
    const messages = refusals.get(placed.get(entry)!) ?? [];
    const right = refusal === null ? messages.length === 0 : messages.some((m) => m.startsWith(refusal));
    return right
      ? []
      : [`${file} → ${specifier}: expected ${refusal ?? "no refusal"}, got ${JSON.stringify(messages)}`];
  });
  expect(wrong).toEqual([]);
}

describe("lint rules of the layout", () => {
  it("refuses an import of kysely's sql outside lib/durable/store, in every folder with rules of its own", () => {
    expectCases(SQL_IMPORTS);
  });

  it("refuses each import against the directions of docs/layout.md, with its folder's message; allows the rest", () => {
    expectCases(DIRECTIONS);
  });

  it("refuses an import of the AI wing from the core, and allows it from the entry points", () => {
    expectCases(AI_WING);
  });

  it("refuses import circles, type-only ones included", () => {
    for (const file of ["steps/c.ts", "steps/d.ts", "engine/e.ts", "engine/f.ts"]) {
      expect(cycles).toContain(`lib/durable/${file}`);
    }
  });
});
