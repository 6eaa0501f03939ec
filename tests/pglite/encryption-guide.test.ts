// The program of docs/guide/encryption.md's "An example" runs as written: copied out of the page
// (the code block after `<!-- example: sealed.mts -->`), its `durable-next` imports pointed at this
// repository's source, and imported; a failed `assert` in it fails the test. The page's "Rotating
// keys" and "A missing key" programs run in tests/pglite/encryption-rotation-guide.test.ts.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGE = path.join(ROOT, "docs/guide/encryption.md");
// Inside the repository (git ignores test-artifacts/): `zod` and `@/` resolve as they do for every test.
const DIR = path.join(ROOT, "test-artifacts", `encryption-guide-${process.pid}`);
const page = readFileSync(PAGE, "utf8");
const EXAMPLES = [...page.matchAll(/<!-- example: ([\w.-]+) -->\n```ts\n([\s\S]*?)\n```\n/g)]
  .map((m) => ({ name: m[1]!, code: m[2]! }))
  .filter((example) => example.name === "sealed.mts");

describe("the programs of the encryption guide", () => {
  afterAll(() => rmSync(DIR, { recursive: true, force: true }));

  it("has the example, importing the package as an app does", () => {
    expect(EXAMPLES.map((example) => example.name)).toEqual(["sealed.mts"]);
    for (const { code } of EXAMPLES) expect(code).toMatch(/from "durable-next\/testing";/);
  });

  for (const { name, code } of EXAMPLES) {
    it(`${name} runs to its last assert`, { timeout: 120_000 }, async () => {
      mkdirSync(DIR, { recursive: true });
      const file = path.join(DIR, name);
      const source = code
        .replaceAll('from "durable-next/testing"', 'from "@/lib/durable/testing"')
        .replaceAll('from "durable-next"', 'from "@/lib/durable"');
      // The program's last statement closes its instance: reaching it means every assert held.
      expect(source.trimEnd().endsWith("await durable.close();")).toBe(true);
      writeFileSync(file, source);
      await import(file);
    });
  }
});
