// scripts/check-function-length.ts (part of `npm run lint`) must fail on a function over 80 lines,
// whatever its form, and pass a tree without one.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
let dir: string;

const body = (lines: number) => Array.from({ length: lines }, (_, i) => `  const v${i} = ${i};`).join("\n");

function check(): { status: number | null; output: string } {
  const run = spawnSync(TSX, [path.join(REPO, "scripts/check-function-length.ts"), dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "durable-length-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("check-function-length", () => {
  it("passes functions of 80 lines and fewer", () => {
    writeFileSync(path.join(dir, "short.ts"), `export function short() {\n${body(78)}\n}\n`);
    expect(check()).toMatchObject({ status: 0 });
  });

  it("fails a declaration, an arrow function or a method over 80 lines, naming each", () => {
    writeFileSync(path.join(dir, "long.ts"), `export function long() {\n${body(80)}\n}\n`);
    writeFileSync(path.join(dir, "arrow.ts"), `export const arrow = () => {\n${body(90)}\n};\n`);
    writeFileSync(path.join(dir, "method.ts"), `export class C {\n  method() {\n${body(85)}\n  }\n}\n`);
    const { status, output } = check();
    expect(status).toBe(1);
    for (const name of ["long, 82 lines", "arrow, 92 lines", "method, 87 lines"]) expect(output).toContain(name);
  });
});
