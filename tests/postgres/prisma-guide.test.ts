// The program of docs/guide/prisma.md runs as written on the real server: copied out of the page
// (the code block after `<!-- example: place-order.mts -->`), its `durable-next` imports pointed at
// this repository's source, its generated client at the tests' (tests/fixtures/prisma, which has
// the page's models), its DATABASE_URL at a database of its own; a failed `assert` fails the test.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/databases";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGE = path.join(ROOT, "docs/guide/prisma.md");
// Inside the repository (git ignores test-artifacts/): `zod` and `@/` resolve as they do for every test.
const DIR = path.join(ROOT, "test-artifacts", `prisma-guide-${process.pid}`);
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

/** The code block that follows `<!-- example: name -->` on the page. */
function example(name: string): string {
  const page = readFileSync(PAGE, "utf8");
  const start = `<!-- example: ${name} -->\n\`\`\`ts\n`;
  const from = page.indexOf(start);
  const to = from < 0 ? -1 : page.indexOf("\n```\n", from + start.length);
  if (to < 0) throw new Error(`${PAGE} has no example ${name}`);
  return page.slice(from + start.length, to);
}

it("the guide's place-order program runs to its last assert", { timeout: 120_000 }, async () => {
  const code = example("place-order.mts");
  expect(code).toContain('from "durable-next/prisma";');
  expect(code.trimEnd().endsWith("await durable.close();")).toBe(true);
  // The page's models are those of the tests' schema: the client generated from it serves both.
  const schema = readFileSync(path.join(ROOT, "tests/fixtures/prisma/schema.prisma"), "utf8");
  const page = readFileSync(PAGE, "utf8");
  for (const model of ["Stock", "Order"]) {
    const block = new RegExp(`model ${model} \\{[^}]*\\}`).exec(page)?.[0];
    expect(block, model).toBeDefined();
    expect(schema).toContain(block);
  }
  const url = await createTestDatabase("durable_prisma_guide");
  mkdirSync(DIR, { recursive: true });
  const file = path.join(DIR, "place-order.mts");
  writeFileSync(
    file,
    code
      .replaceAll('from "durable-next/prisma"', 'from "@/lib/durable/prisma"')
      .replaceAll('from "durable-next"', 'from "@/lib/durable"')
      .replaceAll('from "./generated/prisma/client"', 'from "@/tests/fixtures/prisma/generated/client"')
      .replaceAll("process.env.DATABASE_URL!", JSON.stringify(url)),
  );
  await import(file);
});
