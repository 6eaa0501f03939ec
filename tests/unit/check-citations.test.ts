// scripts/check-citations.ts (part of `npm run lint`) must fire on a comment that cites a page or a
// section that does not exist, or a file outside the repository, and stay quiet on good ones. Each
// case runs it on a throwaway git tree.
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
  const run = spawnSync(TSX, [path.join(REPO, "scripts/check-citations.ts"), "--root", dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "durable-citations-"));
  execFileSync("git", ["init", "-q"], { cwd: dir });
  write("README.md", "# Title\n\n## Set up\n");
  write("docs/guide/retention.md", "# Retention\n\n## Slices\n");
  write("docs/rules.md", "# Rules\n\n## 11a. A lease runs to the deadline\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("check-citations", () => {
  it("passes citations of pages, headings and rules that exist, also across comment lines", () => {
    write(
      "lib/durable/a.ts",
      '// See docs/guide/retention.md, "Slices", and (README, "Set up").\n' +
        "// The lease (docs/rules.md, rule 11a) and (docs/guide/retention.md,\n" +
        '// "Slices").\nexport const a = 1;\n',
    );
    write("lib/durable/store/sql/f.sql", '-- How it is applied (docs/guide/retention.md, "Slices").\nselect 1;\n');
    expect(check()).toMatchObject({ status: 0 });
  });

  it("fails on a missing page, a missing heading, a missing rule, and a file outside the repository", () => {
    write(
      "lib/durable/a.ts",
      "// (docs/deploying.md)\n" +
        '// (docs/guide/retention.md, "Slicing")\n' +
        "// (docs/rules.md, rule 12)\n" +
        "// (README,\n" +
        '// "Worker mode")\n' +
        "// as ../shared/DESIGN.md says\nexport const a = 1;\n",
    );
    const { status, output } = check();
    expect(status).toBe(1);
    expect(output).toContain("lib/durable/a.ts:1: cites docs/deploying.md, which does not exist");
    expect(output).toContain('lib/durable/a.ts:2: cites docs/guide/retention.md, "Slicing", which has no such heading');
    expect(output).toContain("lib/durable/a.ts:3: cites docs/rules.md, rule 12, which has no such rule");
    expect(output).toContain('lib/durable/a.ts:4: cites README.md, "Worker mode", which has no such heading');
    expect(output).toContain("lib/durable/a.ts:6: cites a file outside the repository");
  });
});
