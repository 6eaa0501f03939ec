// The import specifiers of the compiled package, made to work where the package runs: plain Node
// ESM and TypeScript's `nodenext` need the real file (`./x.js`, `./x/index.js`), which tsc does not
// write for the extensionless imports of lib/durable. Each relative specifier of every .js and
// .d.ts is rewritten to the file it names, and the bare ones are collected for package.json.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import ts from "typescript";
import { importSpecifiers } from "../add-to-app/imports";

/** Every .js and .d.ts under `dir`, relative to it with `/`. */
export function compiledFiles(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...compiledFiles(dir, child));
    else if (/\.(js|d\.ts)$/.test(entry.name)) out.push(child);
  }
  return out.sort();
}

/** The package a bare specifier names ("kysely", "@vercel/functions"); null for node builtins. */
export function packageName(spec: string): string | null {
  if (spec.startsWith("node:")) return null;
  const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
  return builtinModules.includes(name) ? null : name;
}

const isRelative = (spec: string) => spec === "." || spec === ".." || spec.startsWith("./") || spec.startsWith("../");

/** The specifier of the file `spec` names from `file` (both in `dir`); null when there is none. */
function resolveRelative(dir: string, file: string, spec: string): string | null {
  const base = path.posix.join(path.posix.dirname(file), spec);
  const folder = spec === "." || spec === ".." || spec.endsWith("/");
  for (const candidate of [...(folder ? [] : [`${base}.js`, base]), path.posix.join(base, "index.js")]) {
    if (!candidate.endsWith(".js") || !existsSync(path.join(dir, candidate))) continue;
    const rel = path.posix.relative(path.posix.dirname(file), candidate);
    return rel.startsWith(".") ? rel : `./${rel}`;
  }
  return null;
}

// The reference app imports the entry points through its `@/` alias; in the package's JSDoc
// examples they are the package's own names.
const ALIASED_ENTRY = /(["'])@\/lib\/durable(\/(?:next|react|testing|drizzle|prisma|ai-react|ai|mcp))?\1/g;

export interface RewriteReport {
  /** Bare specifiers of the .js files: file → specifiers, static and dynamic. */
  runtime: Map<string, string[]>;
  /** Bare specifiers of the .d.ts files. */
  types: Map<string, string[]>;
  problems: string[];
}

/** Rewrites the relative specifiers of one compiled file in place; answers its bare ones. */
function rewriteFile(dir: string, file: string, problems: string[]): string[] {
  const text = readFileSync(path.join(dir, file), "utf8");
  const bare: string[] = [];
  let out = "";
  let last = 0;
  for (const { spec, start, end } of importSpecifiers(text, file)) {
    if (!isRelative(spec)) {
      if (spec.startsWith("@/")) problems.push(`${file} imports "${spec}": the package has no such alias`);
      else bare.push(spec);
      continue;
    }
    const resolved = resolveRelative(dir, file, spec);
    if (resolved === null) {
      problems.push(`${file} imports "${spec}", which is not in the package`);
      continue;
    }
    out += `${text.slice(last, start)}"${resolved}"`;
    last = end;
  }
  out = (out + text.slice(last)).replace(
    ALIASED_ENTRY,
    (_m, q: string, sub = "") => `${q}durable-next${sub.replace("ai-react", "ai/react")}${q}`,
  );
  if (out !== text) writeFileSync(path.join(dir, file), out);
  return bare;
}

export function rewriteSpecifiers(dir: string): RewriteReport {
  const report: RewriteReport = { runtime: new Map(), types: new Map(), problems: [] };
  for (const file of compiledFiles(dir)) {
    const bare = rewriteFile(dir, file, report.problems);
    (file.endsWith(".d.ts") ? report.types : report.runtime).set(file, bare);
  }
  return report;
}

/** The packages the static imports reachable from `entry` load (a dynamic `import()` loads only when called). */
export function staticallyLoaded(dir: string, entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(path.join(dir, file), "utf8");
    for (const spec of staticSpecifiers(text)) {
      if (isRelative(spec)) visit(path.posix.join(path.posix.dirname(file), spec));
      else {
        const name = packageName(spec);
        if (name) packages.add(name);
      }
    }
  };
  visit(entry);
  return packages;
}

/** The specifiers of the static `import` and `export … from` statements of compiled JavaScript. */
function staticSpecifiers(text: string): string[] {
  const file = ts.createSourceFile("file.js", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const found: string[] = [];
  for (const statement of file.statements)
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    )
      found.push(statement.moduleSpecifier.text);
  return found;
}
