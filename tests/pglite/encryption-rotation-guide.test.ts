// The programs of docs/guide/encryption.md's "Rotating keys" and "A missing key" run as written:
// each is copied out of the page (the code block after `<!-- example: name -->`), its
// `durable-next` imports pointed at this repository's source, and imported; a failed `assert`
// in it fails the test.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGE = path.join(ROOT, "docs/guide/encryption.md");
// Inside the repository (git ignores test-artifacts/): `zod` and `@/` resolve as they do for every test.
const DIR = path.join(ROOT, "test-artifacts", `encryption-rotation-guide-${process.pid}`);
const EXAMPLES = ["rotating-keys.mts", "missing-key.mts"];

/** The code block that follows `<!-- example: name -->` on the page. */
function example(name: string): string {
  const page = readFileSync(PAGE, "utf8");
  const start = `<!-- example: ${name} -->\n\`\`\`ts\n`;
  const from = page.indexOf(start);
  const to = from < 0 ? -1 : page.indexOf("\n```\n", from + start.length);
  if (to < 0) throw new Error(`${PAGE} has no example ${name}`);
  return page.slice(from + start.length, to);
}

describe("the rotation and missing-key programs of the encryption guide", () => {
  afterAll(() => rmSync(DIR, { recursive: true, force: true }));

  for (const name of EXAMPLES) {
    it(`${name} runs to its last assert`, { timeout: 120_000 }, async () => {
      mkdirSync(DIR, { recursive: true });
      const file = path.join(DIR, name);
      const code = example(name).replaceAll('from "durable-next"', 'from "@/lib/durable"');
      expect(code).toMatch(/from "@\/lib\/durable";/);
      // The program's last statement closes its instance: reaching it means every assert held.
      expect(code.trimEnd().endsWith("await durable.close();")).toBe(true);
      writeFileSync(file, code);
      await import(file);
    });
  }
});
