// Lists every function longer than 80 lines and every file longer than 400 in lib/durable, app/ and
// scripts/ (docs/layout.md: one concept per file, no function over about 80 lines) and exits 1 when
// there is one. A function is any function-like node the TypeScript compiler sees: declarations,
// expressions, arrow functions, methods, accessors and constructors (a React component is one). Its
// length runs from its first line to its last, comments included. Generated modules are left out.
//   tsx scripts/check-function-length.ts [--max 80] [--max-file 400] [--top 10] [dir …]
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

export interface Found {
  file: string;
  line: number;
  name: string;
  lines: number;
}

export interface SourceText {
  file: string;
  text: string;
}

export interface Limits {
  /** The longest a function may be, in lines. */
  maxFunction: number;
  /** The longest a file may be, in lines. */
  maxFile: number;
}

export interface Checked {
  /** Every function, longest first. */
  functions: Found[];
  /** One line per function or file over its limit; none when the sources comply. */
  problems: string[];
}

export const DEFAULT_DIRS = ["lib/durable", "app", "scripts"];

/** A readable name for a function node: its own, or the variable, property or call it is given to. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(source).slice(0, 40)})`;
  return "(anonymous)";
}

/** The function-like nodes of one file, with their lengths in lines. */
function measureFunctions({ file, text }: SourceText): Found[] {
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: Found[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file, line: first + 1, name: nameOf(node, source), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A file's length in lines, as `wc -l` counts them for a file that ends in a newline. */
export function lineCount(text: string): number {
  const lines = text.split("\n").length;
  return text.endsWith("\n") ? lines - 1 : lines;
}

/** The problems of some sources under the limits: functions over maxFunction, files over maxFile. */
export function checkSources(sources: SourceText[], limits: Limits): Checked {
  const functions = sources.flatMap(measureFunctions).sort((a, b) => b.lines - a.lines);
  const problems = functions
    .filter((fn) => fn.lines > limits.maxFunction)
    .map((fn) => `${fn.file}:${fn.line}: function ${fn.name}, ${fn.lines} lines (over ${limits.maxFunction})`);
  for (const { file, text } of sources) {
    const lines = lineCount(text);
    if (lines > limits.maxFile) problems.push(`${file}: file of ${lines} lines (over ${limits.maxFile})`);
  }
  return { functions, problems };
}

/**
 * Every .ts and .tsx file under `dir`, generated modules, declarations and installed packages left out
 * (scripts/bench/node_modules holds the peers `npm run bench -- --peers` installs).
 */
export function listSources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (entry === "node_modules") return [];
    if (statSync(full).isDirectory()) return listSources(full);
    if (!/\.tsx?$/.test(entry) || entry.endsWith(".d.ts") || entry.endsWith(".generated.ts")) return [];
    return [full];
  });
}

function main(args: string[]) {
  const flagValue = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const top = Number(flagValue("--top") ?? 10);
  const limits: Limits = {
    maxFunction: Number(flagValue("--max") ?? 80),
    maxFile: Number(flagValue("--max-file") ?? 400),
  };
  const dirs = args.filter((arg, index) => !arg.startsWith("--") && !args[index - 1]?.startsWith("--"));
  const files = (dirs.length ? dirs : DEFAULT_DIRS).flatMap(listSources);
  const { functions, problems } = checkSources(
    files.map((file) => ({ file, text: readFileSync(file, "utf8") })),
    limits,
  );
  console.log(`The ${Math.min(top, functions.length)} longest of ${functions.length} functions:`);
  for (const fn of functions.slice(0, top)) console.log(`  ${fn.file}:${fn.line}: ${fn.name}, ${fn.lines} lines`);
  if (problems.length > 0) {
    console.error(`${problems.length} function(s) or file(s) over the limits:`);
    for (const line of problems) console.error(`  ${line}`);
    process.exit(1);
  }
  console.log(`No function is over ${limits.maxFunction} lines and no file over ${limits.maxFile}.`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
