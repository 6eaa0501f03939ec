// scripts/check-function-length.ts (part of `npm run lint`) must fail on a function over 80 lines,
// whatever its form (a React component too), and on a file over 400 lines, in lib/durable, app/ and
// scripts/; and pass sources without one.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkSources, type Limits } from "../../scripts/check-function-length";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
const LIMITS: Limits = { maxFunction: 80, maxFile: 400 };
let dir: string;

const body = (lines: number) => Array.from({ length: lines }, (_, i) => `  const v${i} = ${i};`).join("\n");
/** A function of exactly `lines` lines: its opening line, the body, its closing brace. */
const fn = (name: string, lines: number) => `export function ${name}() {\n${body(lines - 2)}\n}\n`;
/** A file of exactly `lines` short functions' worth of lines (each function 4 lines long). */
const longFile = (lines: number) =>
  Array.from({ length: lines / 4 }, (_, i) => `export function f${i}() {\n  const a = 1;\n  return a;\n}\n`).join("");
/** A component of exactly `lines` lines that returns JSX. */
const component = (lines: number) => {
  const items = Array.from({ length: lines - 6 }, (_, i) => `      <li>${i}</li>`).join("\n");
  return `export function Panel() {\n  return (\n    <ul>\n${items}\n    </ul>\n  );\n}\n`;
};

function write(rel: string, content: string) {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), content);
}

function check(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(TSX, [path.join(REPO, "scripts/check-function-length.ts"), ...args], {
    cwd: dir,
    encoding: "utf8",
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "durable-length-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("check-function-length: checkSources", () => {
  it("passes a function of 80 lines, a component of 80 and a file of 400", () => {
    const sources = [
      { file: "a.ts", text: fn("short", 80) },
      { file: "b.tsx", text: component(80) },
      { file: "c.ts", text: longFile(400) },
    ];
    expect(checkSources(sources, LIMITS).problems).toEqual([]);
  });

  it("fails a function of 81 lines", () => {
    expect(checkSources([{ file: "a.ts", text: fn("long", 81) }], LIMITS).problems).toEqual([
      "a.ts:1: function long, 81 lines (over 80)",
    ]);
  });

  it("fails a .tsx component of 81 lines", () => {
    expect(checkSources([{ file: "panel.tsx", text: component(81) }], LIMITS).problems).toEqual([
      "panel.tsx:1: function Panel, 81 lines (over 80)",
    ]);
  });

  it("fails a file of 401 lines", () => {
    const text = `${longFile(400)}// one more\n`;
    expect(checkSources([{ file: "c.ts", text }], LIMITS).problems).toEqual(["c.ts: file of 401 lines (over 400)"]);
  });
});

describe("check-function-length: the command", () => {
  it("checks lib/durable, app/ and scripts/ by default, and passes when they comply", () => {
    write("lib/durable/ok.ts", fn("ok", 80));
    write("app/ok.tsx", component(80));
    write("scripts/ok.ts", longFile(400));
    expect(check()).toMatchObject({ status: 0 });
    write("app/page.tsx", component(90));
    write("scripts/bench.ts", longFile(404));
    const { status, output } = check();
    expect(status).toBe(1);
    expect(output).toContain("app/page.tsx:1: function Panel, 90 lines (over 80)");
    expect(output).toContain("scripts/bench.ts: file of 404 lines (over 400)");
  });

  it("fails a declaration, an arrow function or a method over 80 lines, naming each", () => {
    write("long.ts", `export function long() {\n${body(80)}\n}\n`);
    write("arrow.ts", `export const arrow = () => {\n${body(90)}\n};\n`);
    write("method.ts", `export class C {\n  method() {\n${body(85)}\n  }\n}\n`);
    const { status, output } = check(dir);
    expect(status).toBe(1);
    for (const name of ["long, 82 lines", "arrow, 92 lines", "method, 87 lines"]) expect(output).toContain(name);
  });

  it("leaves out generated modules and installed packages", () => {
    write("lib/durable/store/migrations.generated.ts", longFile(800));
    write("scripts/bench/node_modules/peer/src/index.ts", longFile(800) + fn("long", 90));
    write("app/ok.tsx", component(80));
    write("scripts/ok.ts", fn("ok", 80));
    expect(check()).toMatchObject({ status: 0 });
  });
});
