// Part of `npm run lint`: the layout rules Biome cannot express (biome.json holds the others:
// no `sql` import outside lib/durable/store, no import circles). See docs/layout.md.
//   - lines of code are at most 120 columns;
//   - `Kysely<any>` is written only in lib/durable/drivers (the store is typed over DurableTables);
//   - the top level of lib/durable holds only the entry points and the shared vocabulary;
//   - the imports TYPES_ONLY lists bring in types only (docs/layout.md, "Who imports whom"): Biome's
//     noRestrictedImports names the files a folder must not reach at all, but cannot tell a
//     type-only import.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileImportsOf } from "./support/imports";

const MAX_COLUMNS = 120;
const TOP_LEVEL = new Set([
  // entry points
  "index.ts",
  "next.ts",
  "react.ts",
  "testing.ts",
  "drizzle.ts",
  "prisma.ts",
  "ai.ts",
  "ai-react.ts",
  "mcp.ts",
  // the vocabulary every layer shares
  "types.ts",
  "signal-types.ts",
  "lifecycle-types.ts",
  "event-types.ts",
  "jsonified.ts",
  "errors.ts",
  "duration.ts",
  "json.ts",
  "names.ts",
  "schemas.ts",
  "text.ts",
  // the metrics' answer and their names, help and samples: the route's Prometheus text (http/) and
  // the OpenTelemetry gauges (engine/) read the one table
  "metrics-types.ts",
  "metric-series.ts",
]);

// [importer, imported, why]: a file under the first folder imports one under the second, outside
// its own folder, only for types.
const TYPES_ONLY: [string, string, string][] = [
  ["lib/durable/react/", "lib/durable/", "react/ runs in the browser, where a value import lands in the bundle"],
  ["lib/durable/steps/", "lib/durable/engine/", "steps/ know the engine only by the StepHost type"],
  ["lib/durable/steps/", "lib/durable/store/", "every store write a step makes goes through its StepHost"],
];

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" })
  .split("\n")
  .filter((file) => /\.(ts|tsx|mjs)$/.test(file) && !file.endsWith(".generated.ts") && !file.endsWith(".d.ts"))
  // Apps as create-next-app writes them (tests/fixtures/apps/README.md), and the client
  // `prisma generate` writes (tests/fixtures/prisma/README.md): theirs, not ours.
  .filter((file) => !file.startsWith("tests/fixtures/apps/") && !file.startsWith("tests/fixtures/prisma/generated/"));

const problems: string[] = [];
for (const file of files) {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    continue; // deleted in the work tree
  }
  text.split("\n").forEach((line, index) => {
    if (line.length > MAX_COLUMNS) problems.push(`${file}:${index + 1}: ${line.length} columns, over ${MAX_COLUMNS}`);
  });
  if (file.startsWith("lib/durable/") && !file.startsWith("lib/durable/drivers/") && /Kysely<any>/.test(text)) {
    problems.push(`${file}: Kysely<any> outside lib/durable/drivers (use DurableDb, or AnyKysely for an app's db)`);
  }
  for (const [importer, imported, why] of TYPES_ONLY.filter(([importer]) => file.startsWith(importer))) {
    for (const found of fileImportsOf(".", file, text)) {
      if (found.typeOnly || found.to.startsWith(importer) || !found.to.startsWith(imported)) continue;
      problems.push(`${file}: imports ${found.to} for more than types; ${why} (use import type)`);
    }
  }
  const topLevel = /^lib\/durable\/([^/]+)$/.exec(file)?.[1];
  if (topLevel && !TOP_LEVEL.has(topLevel)) {
    problems.push(`${file}: the top of lib/durable holds entry points and shared types only; put it in a layer folder`);
  }
}

if (problems.length > 0) {
  console.error(problems.join("\n"));
  console.error(`\n${problems.length} layout problem(s).`);
  process.exit(1);
}
console.log(`layout ok: ${files.length} files checked`);
