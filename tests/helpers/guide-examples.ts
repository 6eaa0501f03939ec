// The programs of a docs/guide page run as written: each is the code block after
// `<!-- example: name -->` on the page, copied out, its `durable-next` imports pointed at this
// repository's source, and imported; a failed `assert` in it fails the test.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The code block that follows `<!-- example: name -->` on `page` (a path under the repository). */
export function guideExample(page: string, name: string): string {
  const text = readFileSync(path.join(ROOT, page), "utf8");
  const start = `<!-- example: ${name} -->\n\`\`\`ts\n`;
  const from = text.indexOf(start);
  const to = from < 0 ? -1 : text.indexOf("\n```\n", from + start.length);
  if (to < 0) throw new Error(`${page} has no example ${name}`);
  return text.slice(from + start.length, to);
}

/** The names of the examples on `page`, in order. */
export function guideExampleNames(page: string): string[] {
  const text = readFileSync(path.join(ROOT, page), "utf8");
  return [...text.matchAll(/<!-- example: ([\w.-]+) -->/g)].map((m) => m[1]!);
}

/** `code` with its `durable-next` and `durable-next/<entry>` imports pointed at lib/durable. */
export function fromSource(code: string): string {
  return code.replace(/from "durable-next(\/[\w-]+)?"/g, (_match, entry = "") => `from "@/lib/durable${entry}"`);
}

/**
 * Writes `code` as `name` into a folder of the test's own inside the repository (git ignores
 * test-artifacts/; `zod` and `@/` resolve there as for every test) and imports it. The folder is
 * removed after the file's tests.
 */
export function exampleRunner(label: string): (name: string, code: string) => Promise<unknown> {
  const dir = path.join(ROOT, "test-artifacts", `${label}-${process.pid}`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return (name, code) => {
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    writeFileSync(file, code);
    return import(file);
  };
}

export interface GuideExamples {
  /** The suite's title. */
  title: string;
  /** The page, under the repository: `docs/guide/composition.md`. */
  page: string;
  /** The examples this suite runs; with `partOfPage`, some of the page's, else all of them, in order. */
  examples: string[];
  /** How each of them imports the package, as an app does. */
  imports: RegExp;
  partOfPage?: boolean;
}

/** The suite: the page holds these examples, each importing the package as an app does, and each runs to its end. */
export function runGuideExamples({ title, page, examples, imports, partOfPage = false }: GuideExamples): void {
  describe(title, () => {
    const run = exampleRunner(path.basename(page, ".md"));

    it("are the ones the page promises, each importing the package as an app does", () => {
      const names = guideExampleNames(page);
      if (partOfPage) expect(names).toEqual(expect.arrayContaining(examples));
      else expect(names).toEqual(examples);
      for (const name of examples) expect(guideExample(page, name)).toMatch(imports);
    });

    for (const name of examples) {
      it(`${name} runs to its last assert`, { timeout: 120_000 }, async () => {
        const code = fromSource(guideExample(page, name));
        // The program's last statement closes its instance: reaching it means every assert held.
        expect(code.trimEnd().endsWith("await durable.close();")).toBe(true);
        await run(name, code);
      });
    }
  });
}
