// Part of `npm run lint`: every file of lib/durable is on a map. A TypeScript file is named in its
// folder's entry of docs/layout.md's folder map ("The folders": the stem `claim-and-advance` in the
// `engine/` entry; a top-level file in the lines above the first folder), or by its path in
// docs/sql.md (`store/claim-run.ts`). A SQL function's file, store/sql/functions/<name>.sql, is
// named in docs/sql.md. The other files of store/ (migrations, locks, the snapshot) are named on the
// map by their pattern, and generated modules are left out.
//   tsx scripts/check-map.ts
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const LIB = "lib/durable/";
const TOP = "";

/** The folder map of docs/layout.md: each folder's entry (the top-level lines under ""). */
export function folderEntries(layout: string): Map<string, string> {
  const block = /## The folders\s*\n```\n([\s\S]*?)\n```/.exec(layout)?.[1];
  if (!block) throw new Error('docs/layout.md has no folder map (a code block under "## The folders")');
  const entries = new Map<string, string>([[TOP, ""]]);
  let folder = TOP;
  for (const line of block.split("\n").slice(1)) {
    const opened = /^ {2}([\w-]+)\/\s/.exec(line);
    if (opened) folder = opened[1]!;
    entries.set(folder, `${entries.get(folder) ?? ""}\n${line}`);
  }
  return entries;
}

/** Whether `text` holds `name` as a word of its own: not inside a longer name such as `x-name`. */
function names(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`).test(text);
}

/** The files of lib/durable (paths from the repository) that neither map names. */
export function unmappedFiles(files: string[], layout: string, sql: string): string[] {
  const entries = folderEntries(layout);
  return files.filter((file) => {
    const rel = file.slice(LIB.length);
    const stem = rel.replace(/^.*\//, "").replace(/\.(tsx?|sql)$/, "");
    if (rel.startsWith("store/sql/functions/")) return rel.endsWith(".sql") && !names(sql, stem);
    if (!/\.tsx?$/.test(rel) || /\.(generated|d)\.ts$/.test(rel)) return false;
    const folder = rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : TOP;
    return !names(entries.get(folder) ?? "", stem) && !names(sql, rel);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", LIB], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
  const unmapped = unmappedFiles(files, readFileSync("docs/layout.md", "utf8"), readFileSync("docs/sql.md", "utf8"));
  if (unmapped.length > 0) {
    for (const file of unmapped) console.error(`${file}: on neither docs/layout.md's folder map nor docs/sql.md`);
    console.error(`\n${unmapped.length} file(s) off the map: name each in its folder's entry of docs/layout.md.`);
    process.exit(1);
  }
  console.log(`map ok: ${files.length} files of ${LIB} on docs/layout.md's or docs/sql.md's map`);
}
