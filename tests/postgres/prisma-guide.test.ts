// The program of docs/guide/prisma.md runs as written on the real server (tests/helpers/guide-examples.ts),
// its generated client pointed at the tests' (tests/fixtures/prisma, which has the page's models)
// and its DATABASE_URL at a database of its own; a failed `assert` fails the test.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { createTestDatabase } from "../helpers/databases";
import { exampleRunner, fromSource, guideExample, ROOT } from "../helpers/guide-examples";

const PAGE = "docs/guide/prisma.md";
const run = exampleRunner("prisma-guide");

it("the guide's place-order program runs to its last assert", { timeout: 120_000 }, async () => {
  const code = guideExample(PAGE, "place-order.mts");
  expect(code).toContain('from "durable-next/prisma";');
  expect(code.trimEnd().endsWith("await durable.close();")).toBe(true);
  // The page's models are those of the tests' schema: the client generated from it serves both.
  const schema = readFileSync(path.join(ROOT, "tests/fixtures/prisma/schema.prisma"), "utf8");
  const page = readFileSync(path.join(ROOT, PAGE), "utf8");
  for (const model of ["Stock", "Order"]) {
    const block = new RegExp(`model ${model} \\{[^}]*\\}`).exec(page)?.[0];
    expect(block, model).toBeDefined();
    expect(schema).toContain(block);
  }
  const url = await createTestDatabase("durable_prisma_guide");
  await run(
    "place-order.mts",
    fromSource(code)
      .replaceAll('from "./generated/prisma/client"', 'from "@/tests/fixtures/prisma/generated/client"')
      .replaceAll("process.env.DATABASE_URL!", JSON.stringify(url)),
  );
});
