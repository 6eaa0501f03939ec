// Lists every function in lib/durable longer than 80 lines (docs/layout.md: one concept per file,
// no function over about 80 lines) and exits 1 when there is one. A function is any function-like
// node the TypeScript compiler sees: declarations, expressions, arrow functions, methods,
// accessors and constructors. Its length runs from its first line to its last, comments included.
//   tsx scripts/check-function-length.ts [--max 80] [--top 10] [dir …]   (default dir: lib/durable)
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

interface Found {
  file: string;
  line: number;
  name: string;
  lines: number;
}

const args = process.argv.slice(2);
const max = Number(flagValue("--max") ?? 80);
const top = Number(flagValue("--top") ?? 10);
const dirs = args.filter((arg, index) => !arg.startsWith("--") && !args[index - 1]?.startsWith("--"));

/** The value after `flag` on the command line, if any. */
function flagValue(flag: string): string | undefined {
  const index = args.indexOf(flag);
  return index === -1 ? undefined : args[index + 1];
}

/** Every .ts and .tsx file under `dir`, generated modules and declarations left out. */
function listSources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return listSources(full);
    if (!/\.tsx?$/.test(entry) || entry.endsWith(".d.ts") || entry.endsWith(".generated.ts")) return [];
    return [full];
  });
}

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
function measure(file: string): Found[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
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

const all = (dirs.length ? dirs : ["lib/durable"]).flatMap(listSources).flatMap(measure);
all.sort((a, b) => b.lines - a.lines);
const over = all.filter((fn) => fn.lines > max);
const show = (fn: Found) => `${fn.file}:${fn.line}: ${fn.name}, ${fn.lines} lines`;
console.log(`The ${Math.min(top, all.length)} longest of ${all.length} functions:`);
for (const fn of all.slice(0, top)) console.log(`  ${show(fn)}`);
if (over.length > 0) {
  console.error(`${over.length} function(s) over ${max} lines:`);
  for (const fn of over) console.error(`  ${show(fn)}`);
  process.exit(1);
}
console.log(`No function is over ${max} lines.`);
