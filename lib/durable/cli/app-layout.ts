// What the tools need to know of the app they write into: where app/ lives (Next's src/ layout),
// whether it is TypeScript, and whether its `@/` alias reaches app/ so a route file can import the
// instance as `@/app/durable`, the way the reference app's do. When in doubt the answer is the one
// that always works: a relative import.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export interface Layout {
  /** "" or "src/": where app/ (and, for add-to-app, lib/) live in the app. */
  base: string;
}

/** An app with src/app and no app/ keeps everything under src/ (Next's src layout). */
export function detectLayout(target: string): Layout {
  const srcApp = existsSync(path.join(target, "src", "app")) && !existsSync(path.join(target, "app"));
  return { base: srcApp ? "src/" : "" };
}

export const isTypeScript = (target: string) => existsSync(path.join(target, "tsconfig.json"));

/** JSON with comments and trailing commas (a tsconfig) as plain JSON; strings are kept as they are. */
export function stripJsonComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

interface CompilerOptions {
  baseUrl?: string;
  paths?: Record<string, string[]>;
}

/** The compilerOptions of the app's tsconfig.json (or jsconfig.json); null when there is none or it cannot be read. */
function compilerOptions(target: string): CompilerOptions | null {
  for (const name of ["tsconfig.json", "jsconfig.json"]) {
    const file = path.join(target, name);
    if (!existsSync(file)) continue;
    try {
      const parsed = JSON.parse(stripJsonComments(readFileSync(file, "utf8"))) as { compilerOptions?: CompilerOptions };
      return parsed.compilerOptions ?? {};
    } catch {
      return null;
    }
  }
  return null;
}

/** True when the app maps `@/*` to `<base>*`, as create-next-app does ("./*", or "./src/*" under src/). */
export function aliasReachesApp(target: string, base: string): boolean {
  const options = compilerOptions(target);
  const entries = options?.paths?.["@/*"];
  if (!Array.isArray(entries)) return false;
  const from = options?.baseUrl ?? ".";
  return entries.some((entry) => path.posix.normalize(path.posix.join(from, entry)) === `${base}*`);
}
