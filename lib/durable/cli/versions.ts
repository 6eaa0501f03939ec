// The packages an app brings itself, with the versions the toolkit works with: the package's peer
// dependencies (npm run pack writes them from PEERS), what `durable-next init` advises installing,
// and the version checks add-to-app makes of a copied toolkit's packages (docs/guide/installing.md).

type Deps = Record<string, string>;
export interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Deps;
  devDependencies?: Deps;
  peerDependencies?: Deps;
}

/** "^15.2.0" → [15, 2]; null when it is not a plain version range. */
export function majorMinor(range: string): [number, number] | null {
  const match = /(\d+)\.(\d+|x|\*)/.exec(range) ?? /^[\^~>=\s]*(\d+)$/.exec(range);
  if (!match) return null;
  return [Number(match[1]), match[2] === undefined || Number.isNaN(Number(match[2])) ? 0 : Number(match[2])];
}

/** Same major (and, below 1.0, same minor: 0.x minors break) as ours. */
export function compatible(theirs: string, ours: string): boolean {
  const a = majorMinor(theirs);
  const b = majorMinor(ours);
  if (!a || !b) return true; // a tag, a git URL, a workspace: not ours to judge
  return a[0] === b[0] && (b[0] !== 0 || a[1] === b[1]);
}

/** The lowest majors the toolkit works with (route handlers' Promise params need Next 15). */
export const MINIMUM_MAJOR: Readonly<Record<string, number>> = { next: 15, react: 19 };

export interface Peer {
  range: string;
  /** What `npm install` takes when the app lacks it and needs it. */
  install: string;
  /** Who needs it. */
  usedBy: string;
}

/** The packages an app shares with the toolkit: one copy of each, the app's. */
export const PEERS: Readonly<Record<string, Peer>> = {
  next: { range: `>=${MINIMUM_MAJOR.next}.0.0`, install: "next@latest", usedBy: "the app (durable-next/next)" },
  react: { range: `>=${MINIMUM_MAJOR.react}.0.0`, install: "react@latest", usedBy: "durable-next/react" },
  zod: { range: "^4.0.0", install: "zod@4", usedBy: "workflows (their input, output and signal schemas)" },
  ai: { range: "^6.0.0", install: "ai@6", usedBy: "AI steps (ctx.step.ai)" },
  "drizzle-orm": { range: ">=0.45.0 <1.0.0", install: "drizzle-orm@0.45", usedBy: "durable-next/drizzle" },
  "@prisma/client": { range: "^7.0.0", install: "@prisma/client@7", usedBy: "durable-next/prisma" },
  "@modelcontextprotocol/sdk": {
    range: "^1.32.0",
    install: "@modelcontextprotocol/sdk@1",
    usedBy: "durable-next/mcp (createMcpRoute)",
  },
};

export interface InstallAdvice {
  install: string[];
  warnings: string[];
}

/** A package of the app's: its version range, from dependencies or devDependencies. */
const versionIn = (pkg: PackageJson, name: string) => pkg.dependencies?.[name] ?? pkg.devDependencies?.[name];

/**
 * What an app needs beside the files init writes: the package itself unless package.json lists it,
 * zod (every workflow imports it), and a word on a next or react older than the toolkit needs.
 */
export function installAdvice(app: PackageJson, version: string): InstallAdvice {
  const advice: InstallAdvice = { install: [], warnings: [] };
  if (versionIn(app, "durable-next") === undefined) advice.install.push(`durable-next@${version}`);
  if (versionIn(app, "zod") === undefined) advice.install.push(PEERS.zod!.install);
  for (const [name, minimum] of Object.entries(MINIMUM_MAJOR)) {
    const theirs = versionIn(app, name);
    const parsed = theirs === undefined ? null : majorMinor(theirs);
    if (theirs === undefined && name === "next")
      advice.warnings.push("package.json does not list next: run init in the root of a Next.js app");
    else if (parsed && parsed[0] < minimum)
      advice.warnings.push(`${name} ${theirs}: durable-next needs ${name} ${minimum} or later`);
  }
  return advice;
}
