// What add-to-app writes into the other app: the toolkit (one folder, lib/durable, its SQL
// migrations included) copied as is, our route files with their `@/` imports made relative, and a
// fresh instance file. Nothing here touches the other app; `writePlan` does, and never over a file
// that is already there (`--update` replaces files through update.ts). The app's db/ is never written.
import { builtinModules } from "node:module";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { detectLayout, type Layout } from "../../lib/durable/cli/app-layout";
import { routeFiles } from "../../lib/durable/cli/route-files";
import { instanceFile } from "../../lib/durable/cli/templates";
import { writeFiles } from "../../lib/durable/cli/write-files";
import { importSpecifiers } from "./imports";
import { MANIFEST_NAME } from "./manifest";

export { detectLayout, type Layout };

export interface PlannedFile {
  /** Path in the other app, with `/` separators. */
  dest: string;
  content: string;
  group: "toolkit" | "instance" | "route";
}

/** Tests stay here; so does a manifest, should this folder ever hold one. */
export const isCopied = (name: string) => !/\.test\.tsx?$/.test(name) && name !== MANIFEST_NAME;

/** The package's installer (`durable-next init`): an app that copies the source has no use for it. */
const NOT_COPIED = ["lib/durable/cli"];

function filesUnder(root: string, rel: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory() && NOT_COPIED.includes(child)) continue;
    if (entry.isDirectory()) out.push(...filesUnder(root, child));
    else if (entry.isFile() && isCopied(entry.name)) out.push(child);
  }
  return out.sort();
}

/** Every import specifier of a file's code (see imports.ts: comments and strings are not imports). */
export function importsOf(source: string, fileName = "file.ts"): string[] {
  return importSpecifiers(source, fileName).map((found) => found.spec);
}

const relativeTo = (fromFile: string, toPath: string) => {
  const rel = path.posix.relative(path.posix.dirname(fromFile), toPath);
  return rel.startsWith(".") ? rel : `./${rel}`;
};

/** Turns `@/x` (our tsconfig alias for the repository root) into a path relative to `dest`. */
function rewriteAlias(source: string, dest: string, base: string): string {
  let out = "";
  let last = 0;
  for (const { spec, start, end } of importSpecifiers(source, dest)) {
    if (!spec.startsWith("@/")) continue;
    out += `${source.slice(last, start)}"${relativeTo(dest, base + spec.slice(2))}"`;
    last = end;
  }
  return out + source.slice(last);
}

/** The package a bare specifier names: "kysely", "@vercel/functions", not node builtins. */
export function packageOf(spec: string): string | null {
  if (spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("@/") || spec.startsWith("node:")) return null;
  const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
  return builtinModules.includes(name) ? null : name;
}

/**
 * Packages only an optional entry of the toolkit imports (lib/durable/drizzle.ts, mcp.ts and what only
 * they use): an app without one gets none of the files that import it, so its build never looks for it.
 */
export const OPTIONAL_PACKAGES = ["drizzle-orm", "@modelcontextprotocol/sdk"];

/**
 * The toolkit's files, less those that import an optional package the app lacks, and, in turn,
 * those that import a file left out. `missing` lists the optional packages the app does not have.
 */
function toolkitFiles(root: string, base: string, missing: string[]): { planned: PlannedFile[]; left: string[] } {
  let files = filesUnder(root, "lib/durable").map((rel) => ({
    rel,
    dest: base + rel,
    content: rewriteAlias(readFileSync(path.join(root, rel), "utf8"), base + rel, base),
  }));
  const left: string[] = [];
  for (let changed = true; changed; ) {
    const present = new Set(files.map((f) => f.dest));
    const out = files.filter((f) =>
      importsOf(f.content, f.dest).some((spec) =>
        spec.startsWith(".") ? !resolvesIn(present, f.dest, spec) : missing.includes(packageOf(spec) ?? ""),
      ),
    );
    changed = out.length > 0;
    left.push(...out.map((f) => f.rel));
    files = files.filter((f) => !out.includes(f));
  }
  return { planned: files.map(({ dest, content }) => ({ dest, content, group: "toolkit" as const })), left };
}

const resolvesIn = (present: Set<string>, from: string, spec: string) => {
  const target = path.posix.join(path.posix.dirname(from), spec);
  return [target, `${target}.ts`, `${target}.tsx`, `${target}/index.ts`].some((c) => present.has(c));
};

/**
 * What add-to-app writes. `appPackages`: the packages the app lists; the files that need an
 * optional package outside it are not planned, and `leftOut` names them.
 */
export function planFiles(
  root: string,
  { base }: Layout,
  appPackages?: Set<string>,
): PlannedFile[] & { leftOut?: string[] } {
  const missing = appPackages ? OPTIONAL_PACKAGES.filter((name) => !appPackages.has(name)) : [];
  // The toolkit is one folder: its migrations, generated SQL module and table types live in lib/durable/store.
  const { planned, left } = toolkitFiles(root, base, missing);

  const instance = `${base}app/durable.ts`;
  planned.push({
    dest: instance,
    content: instanceFile({
      lib: relativeTo(instance, `${base}lib/durable`),
      libFromWorkflows: relativeTo(`${base}app/workflows/x.ts`, `${base}lib/durable`),
    }),
    group: "instance",
  });

  // The route files init writes too (the reference app's text, tests/unit/init.test.ts checks),
  // importing the instance by a relative path: the other app's `@/` alias may not reach it.
  for (const file of routeFiles(base, false)) planned.push({ ...file, group: "route" });

  checkSelfContained(planned);
  return Object.assign(planned, { leftOut: left });
}

/** Every relative import of a copied file resolves inside the copy: the toolkit needs nothing else of ours. */
function checkSelfContained(planned: PlannedFile[]) {
  const present = new Set(planned.map((f) => f.dest));
  for (const file of planned) {
    for (const spec of importsOf(file.content, file.dest)) {
      if (spec.startsWith("@/")) throw new Error(`${file.dest} still imports "${spec}" after rewriting`);
      if (!spec.startsWith(".")) continue;
      if (file.group === "instance" && spec.startsWith("./workflows/")) continue;
      if (!resolvesIn(present, file.dest, spec)) {
        throw new Error(
          `${file.dest} imports "${spec}", which add-to-app does not copy: the toolkit would not build there`,
        );
      }
    }
  }
}

/** The npm packages the copied files import. */
export function packagesUsed(planned: PlannedFile[]): string[] {
  const names = new Set<string>();
  for (const file of planned)
    for (const spec of importsOf(file.content, file.dest)) {
      const name = packageOf(spec);
      if (name) names.add(name);
    }
  return [...names].sort();
}

export type FileOutcome = "created" | "same" | "kept";

/** Writes each planned file that does not exist yet; an existing one is never touched (no record: none is ours). */
export function writePlan(target: string, planned: PlannedFile[], dryRun: boolean): Map<string, FileOutcome> {
  return writeFiles(target, planned, {}, dryRun) as Map<string, FileOutcome>;
}
