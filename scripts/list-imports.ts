// Who imports whom in lib/durable, as the code has it: each folder (or top-level file) and the files
// of other folders it imports, with the importers, and "types" when every such import is type-only.
// Read it beside docs/layout.md, "Who imports whom".
//   tsx scripts/list-imports.ts [folder …]   (default: every folder and top-level file)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { type FileImport, fileImportsOf } from "./support/imports";

const LIB = "lib/durable/";

/** A file's folder under lib/durable (`engine`, `http`), or the file's own name at the top. */
function folderOf(file: string): string {
  return file.slice(LIB.length).split("/")[0]!;
}

const wanted = process.argv.slice(2);
const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", LIB], { encoding: "utf8" })
  .split("\n")
  .filter((file) => /\.tsx?$/.test(file) && !file.endsWith(".generated.ts"));

const crossing = new Map<string, Map<string, FileImport[]>>();
for (const file of files) {
  const folder = folderOf(file);
  if (wanted.length > 0 && !wanted.includes(folder)) continue;
  for (const found of fileImportsOf(".", file, readFileSync(file, "utf8"))) {
    if (!found.to.startsWith(LIB) || folderOf(found.to) === folder) continue;
    const targets = crossing.get(folder) ?? new Map<string, FileImport[]>();
    const target = found.to.slice(LIB.length);
    targets.set(target, [...(targets.get(target) ?? []), found]);
    crossing.set(folder, targets);
  }
}

for (const [folder, targets] of [...crossing].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`${folder} →`);
  for (const [target, imports] of [...targets].sort(([a], [b]) => a.localeCompare(b))) {
    const kind = imports.every((found) => found.typeOnly) ? " (types)" : "";
    const importers = imports.map((found) => found.from.slice(LIB.length + folder.length + 1) || found.from);
    console.log(`  ${target}${kind}  ← ${[...new Set(importers)].join(", ")}`);
  }
}
