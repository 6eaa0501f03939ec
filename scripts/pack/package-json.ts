// The package.json of durable-next, made from what the compiled files import: `dependencies` are
// exactly the packages the JavaScript loads (static or dynamic), at the root package.json's
// versions as caret ranges (so an app that has one of them in range shares one copy); the packages
// an app shares with the toolkit are peers (lib/durable/cli/versions.ts, PEERS), optional when
// the core entry does not load them. An import of anything else fails the build.
import { PEERS } from "../../lib/durable/cli/versions";
import { packageName } from "./specifiers";

type Deps = Record<string, string>;
export interface RootPackage {
  name: string;
  version: string;
  description?: string;
  engines?: Deps;
  dependencies?: Deps;
  devDependencies?: Deps;
}

/** The package's entry points: subpath → the compiled file's name, without its extension. */
export const ENTRIES: Readonly<Record<string, string>> = {
  ".": "index",
  "./next": "next",
  "./react": "react",
  "./testing": "testing",
  "./drizzle": "drizzle",
  "./prisma": "prisma",
  "./ai": "ai",
  "./ai/react": "ai-react",
  "./mcp": "mcp",
};

export const BIN = "cli/bin.js";

export interface ImportsSeen {
  /** Bare specifiers of the .js files, by file. */
  runtime: Map<string, string[]>;
  /** Bare specifiers of the .d.ts files, by file. */
  types: Map<string, string[]>;
  /** The packages the core entry (index.js) loads through static imports. */
  core: Set<string>;
}

/** Each package named by `seen`, with the first file that names it. */
function packagesOf(seen: Map<string, string[]>): Map<string, string> {
  const names = new Map<string, string>();
  for (const [file, specs] of seen)
    for (const spec of specs) {
      const name = packageName(spec);
      if (name && !names.has(name)) names.set(name, file);
    }
  return names;
}

const caret = (version: string) => (/^\d/.test(version) ? `^${version}` : version);

/** dependencies and the peers' optional flags; `problems` for an import that is neither. */
function dependenciesOf(root: RootPackage, seen: ImportsSeen, problems: string[]) {
  const dependencies: Deps = {};
  const runtime = packagesOf(seen.runtime);
  for (const [name, file] of runtime) {
    if (PEERS[name]) continue;
    const version = root.dependencies?.[name];
    if (version) dependencies[name] = caret(version);
    else
      problems.push(
        `${file} imports "${name}", which the root package.json does not list in dependencies` +
          (root.devDependencies?.[name] ? " (only in devDependencies: make it a dependency or a peer)" : ""),
      );
  }
  for (const [name, file] of packagesOf(seen.types))
    if (!PEERS[name] && !dependencies[name])
      problems.push(`${file} (types) imports "${name}", which is neither a dependency nor a peer of the package`);
  return Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export interface PackageJsonInput {
  root: RootPackage;
  seen: ImportsSeen;
  /** The entries whose compiled file exists (drizzle only once lib/durable/drizzle.ts does). */
  entries: string[];
}

export function packageJson({ root, seen, entries }: PackageJsonInput): {
  json: Record<string, unknown>;
  problems: string[];
} {
  const problems: string[] = [];
  const dependencies = dependenciesOf(root, seen, problems);
  const exportsMap: Record<string, unknown> = {};
  const typesVersions: Record<string, string[]> = {};
  for (const subpath of entries) {
    const file = ENTRIES[subpath]!;
    exportsMap[subpath] = { types: `./${file}.d.ts`, default: `./${file}.js` };
    if (subpath !== ".") typesVersions[subpath.slice(2)] = [`./${file}.d.ts`];
  }
  exportsMap["./package.json"] = "./package.json";
  const peerDependencies = Object.fromEntries(Object.entries(PEERS).map(([name, peer]) => [name, peer.range]));
  const peerDependenciesMeta = Object.fromEntries(
    Object.keys(PEERS)
      .filter((name) => !seen.core.has(name))
      .map((name) => [name, { optional: true }]),
  );
  const json = {
    name: root.name,
    version: root.version,
    description: root.description,
    type: "module",
    exports: exportsMap,
    // Only for TypeScript's old `node` resolution, which reads no `exports`.
    typesVersions: { "*": typesVersions },
    types: "./index.d.ts",
    bin: { [root.name]: `./${BIN}` },
    engines: root.engines ?? { node: ">=20.9" },
    dependencies,
    peerDependencies,
    peerDependenciesMeta,
  };
  return { json, problems };
}
