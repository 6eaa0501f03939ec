// scripts/check-layout.ts (part of `npm run lint`) must fail when lib/durable/react imports a file
// of the rest of the toolkit for more than its types, or lib/durable/steps a file of engine/ or
// store/; and pass type-only imports and a folder's own files.
// Each case runs it on a throwaway git tree.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileIn } from "../helpers/write-file-in";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
let dir: string;

const write = (rel: string, content: string) => writeFileIn(dir, rel, content);

function check(): { status: number | null; output: string } {
  const run = spawnSync(TSX, [path.join(REPO, "scripts/check-layout.ts")], { cwd: dir, encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "durable-layout-"));
  execFileSync("git", ["init", "-q"], { cwd: dir });
  write("lib/durable/schemas.ts", "export const runStates = ['done'] as const;\nexport type RunState = 'done';\n");
  write("lib/durable/react/types.ts", "export type Hook = { state: string };\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("check-layout, react/", () => {
  it("passes react/ files that import only types from the rest, and anything of their own", () => {
    write(
      "lib/durable/react/hook.ts",
      'import type { RunState } from "../schemas";\nimport { type Hook } from "./types";\n' +
        'export { type RunState as State } from "../schemas";\nexport const h = (s: RunState, k: Hook) => [s, k];\n',
    );
    expect(check()).toMatchObject({ status: 0 });
  });

  it("fails a react/ file that imports a value from the rest, by name, re-export or import()", () => {
    write("lib/durable/react/a.ts", 'import { runStates } from "../schemas";\nexport const a = runStates;\n');
    write("lib/durable/react/b.ts", 'export { runStates } from "../schemas";\n');
    write("lib/durable/react/c.ts", 'export const c = () => import("../schemas");\n');
    const { status, output } = check();
    expect(status).toBe(1);
    for (const file of ["a", "b", "c"]) {
      expect(output).toContain(`lib/durable/react/${file}.ts: imports lib/durable/schemas.ts for more than types`);
    }
  });
});

describe("check-layout, steps/", () => {
  beforeEach(() => {
    write("lib/durable/engine/run/step-host.ts", "export interface StepHost { now(): Date }\n");
    write("lib/durable/engine/wings.ts", "export const wings = new Map();\n");
    write(
      "lib/durable/store/index.ts",
      "export const recordStep = () => 1;\nexport type StepRecord = { id: string };\n",
    );
  });

  it("passes a step that imports the StepHost and store types only", () => {
    write(
      "lib/durable/steps/s.ts",
      'import type { StepHost } from "../engine/run/step-host";\nimport type { StepRecord } from "../store";\n' +
        "export const s = (host: StepHost, r: StepRecord) => [host.now(), r];\n",
    );
    expect(check()).toMatchObject({ status: 0 });
  });

  it("fails a step that takes a value from the engine or a store function: its writes go through the host", () => {
    write("lib/durable/steps/a.ts", 'import { wings } from "../engine/wings";\nexport const a = wings;\n');
    write("lib/durable/steps/b.ts", 'import { recordStep } from "../store";\nexport const b = recordStep;\n');
    const { status, output } = check();
    expect(status).toBe(1);
    expect(output).toContain("lib/durable/steps/a.ts: imports lib/durable/engine/wings.ts for more than types");
    expect(output).toContain("lib/durable/steps/b.ts: imports lib/durable/store/index.ts for more than types");
  });
});
