// The toolkit's imports of its own files, file by file, with whether each brings in types only. Used
// by scripts/list-imports.ts (who imports whom, for docs/layout.md) and scripts/check-layout.ts (the
// directions Biome's noRestrictedImports cannot express).
import { existsSync } from "node:fs";
import path from "node:path";
import { importSpecifiers } from "../add-to-app/imports";

/** One import of a file of the repository by another, paths relative to the repository. */
export interface FileImport {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** The file under `root` a relative specifier names, as TypeScript's bundler resolution finds it. */
function resolveRelative(root: string, from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = path.posix.join(path.posix.dirname(from), spec);
  const candidates = [`${base}.ts`, `${base}.tsx`, base, `${base}/index.ts`, `${base}/index.tsx`];
  return candidates.find((candidate) => /\.tsx?$/.test(candidate) && existsSync(path.join(root, candidate)));
}

/** The relative imports of `file` (its text `source`) that name a file under `root`. */
export function fileImportsOf(root: string, file: string, source: string): FileImport[] {
  return importSpecifiers(source, file).flatMap(({ spec, typeOnly }) => {
    const to = resolveRelative(root, file, spec);
    return to ? [{ from: file, to, typeOnly }] : [];
  });
}
