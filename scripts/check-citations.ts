// Part of `npm run lint`: every page a code comment cites exists, and so does the section it names.
// Code documents itself in the repository's own docs/ (docs/README.md): a comment cites
// `docs/<page>.md`, optionally with a quoted `## Heading` of that page (`docs/guide/retention.md,
// "Slices"`) or a rule of docs/rules.md (`docs/rules.md, rule 11a`); `README, "Heading"` names a
// heading of README.md. Nothing outside the repository is cited (the team's own notes are not the
// product's). Run on another tree with `--root <dir>` (tests/unit/check-citations.test.ts does).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const rootFlag = process.argv.indexOf("--root");
const root = rootFlag > 0 ? process.argv[rootFlag + 1]! : process.cwd();

/** A citation as written: the page, and the heading or rule it names, if any. */
interface Citation {
  file: string;
  line: number;
  page: string;
  section?: string;
  rule?: string;
}

// A comment continued on the next line: the line break and the next line's comment marker.
const CONTINUATION = /\n[ \t]*(?:\/\/|\*|--)[ \t]*/g;
const CITATION = /\b(README|docs\/[\w./-]+?\.md)\b(?:,\s*(?:"([^"\n]+)"|rules? (\d+[a-z]?)))?/g;
const OUTSIDE = /\.\.\/shared\/|\bDESIGN(?:\.md| §)|\bSTYLE\.md\b|\bSTACK\.md\b/;

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
  cwd: root,
  encoding: "utf8",
})
  .split("\n")
  .filter((file) => /^(lib|app|scripts|tests|db)\/.*\.(ts|tsx|mjs|sql)$/.test(file))
  // The check and its test hold bad citations on purpose; Prisma's generated client is not ours.
  .filter((file) => !file.endsWith(".generated.ts") && !/check-citations(\.test)?\.ts$/.test(file))
  .filter((file) => !file.startsWith("tests/fixtures/prisma/generated/"))
  .filter((file) => existsSync(join(root, file)));

/** The citations in one file, with the line each starts on. */
function citationsIn(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  // Join continued comment lines so a citation split over two lines reads as one; keep a map
  // from the joined text back to line numbers.
  const lineStarts: number[] = [];
  let joined = "";
  let last = 0;
  for (const match of text.matchAll(CONTINUATION)) {
    joined += text.slice(last, match.index);
    lineStarts.push(joined.length);
    joined += " ";
    last = match.index + match[0].length;
  }
  joined += text.slice(last);
  const lineOf = (offset: number) => {
    const before = joined.slice(0, offset);
    return before.split("\n").length + lineStarts.filter((start) => start < offset).length;
  };
  for (const match of joined.matchAll(CITATION)) {
    found.push({ file, line: lineOf(match.index), page: match[1]!, section: match[2], rule: match[3] });
  }
  return found;
}

/** The headings of a markdown page, without their `#` marks. */
function headingsOf(page: string): string[] {
  return readFileSync(join(root, page), "utf8")
    .split("\n")
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => line.replace(/^#+ /, "").trim());
}

const problems: string[] = [];
const headings = new Map<string, string[]>();
for (const file of files) {
  const text = readFileSync(join(root, file), "utf8");
  text.split("\n").forEach((line, index) => {
    if (OUTSIDE.test(line)) problems.push(`${file}:${index + 1}: cites a file outside the repository`);
  });
  for (const citation of citationsIn(file, text)) {
    const page = citation.page === "README" ? "README.md" : citation.page;
    const where = `${citation.file}:${citation.line}`;
    if (!existsSync(join(root, page))) {
      problems.push(`${where}: cites ${page}, which does not exist`);
      continue;
    }
    if (!headings.has(page)) headings.set(page, headingsOf(page));
    const pageHeadings = headings.get(page)!;
    if (citation.section && !pageHeadings.includes(citation.section)) {
      problems.push(`${where}: cites ${page}, "${citation.section}", which has no such heading`);
    }
    if (citation.rule && !pageHeadings.some((heading) => heading.startsWith(`${citation.rule}. `))) {
      problems.push(`${where}: cites ${page}, rule ${citation.rule}, which has no such rule`);
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join("\n"));
  console.error(`\n${problems.length} citation problem(s).`);
  process.exit(1);
}
console.log(`citations ok: ${files.length} files checked`);
