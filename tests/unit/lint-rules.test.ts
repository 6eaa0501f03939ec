// The layering rules are lint rules (biome.json): they must fire on a violation, not only stay
// quiet on this tree. Each case lints a throwaway tree under the repository's own configuration.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = path.join(__dirname, "../..");
const BIOME = path.join(REPO, "node_modules/.bin/biome");
let dir: string;

function write(rel: string, content: string) {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), content);
}

/** The rule names Biome reports per file, from its JSON reporter. */
function lint(): Record<string, string[]> {
  let out: string;
  try {
    out = execFileSync(BIOME, ["lint", "--reporter=json", "."], { cwd: dir, encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    out = (error as { stdout: string }).stdout;
  }
  const report = JSON.parse(out) as { diagnostics: { category: string; location: { path: string } }[] };
  const byFile: Record<string, string[]> = {};
  for (const d of report.diagnostics) byFile[d.location.path] = [...(byFile[d.location.path] ?? []), d.category];
  return byFile;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "durable-lint-"));
  const config = JSON.parse(readFileSync(path.join(REPO, "biome.json"), "utf8"));
  delete config.$schema;
  config.vcs = { enabled: false };
  write("biome.json", JSON.stringify(config));
  const sqlImport = 'import { sql } from "kysely";\n\nexport const q = sql`select 1`;\n';
  write("lib/durable/engine/probe.ts", sqlImport);
  write("lib/durable/store/probe.ts", sqlImport);
  write("lib/durable/steps/a.ts", 'import { b } from "./b";\n\nexport const a = () => b();\n');
  write("lib/durable/steps/b.ts", 'import { a } from "./a";\n\nexport const b = () => a;\n');
  write("lib/durable/engine/c.ts", 'import type { D } from "./d";\n\nexport type C = { d?: D };\n');
  write("lib/durable/engine/d.ts", 'import type { C } from "./c";\n\nexport type D = { c?: C };\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("lint rules of the layout", () => {
  it("refuses an import of kysely's sql outside lib/durable/store, and allows it inside", () => {
    const found = lint();
    expect(found["lib/durable/engine/probe.ts"]).toContain("lint/style/noRestrictedImports");
    expect(found["lib/durable/store/probe.ts"] ?? []).not.toContain("lint/style/noRestrictedImports");
  });

  it("refuses import circles, type-only ones included", () => {
    const found = lint();
    for (const file of ["steps/a.ts", "steps/b.ts", "engine/c.ts", "engine/d.ts"]) {
      expect(found[`lib/durable/${file}`]).toContain("lint/suspicious/noImportCycles");
    }
  });
});
