// Which npm packages the other app needs for the copied files, at the versions this repository
// pins (and tests with). add-to-app prints the install command; it never edits package.json.

type Deps = Record<string, string>;
export interface PackageJson {
  dependencies?: Deps;
  devDependencies?: Deps;
}

export interface DependencyAdvice {
  install: string[];
  installDev: string[];
  warnings: string[];
}

/** "^15.2.0" → [15, 2]; null when it is not a plain version range. */
function majorMinor(range: string): [number, number] | null {
  const match = /(\d+)\.(\d+|x|\*)/.exec(range) ?? /^[\^~>=\s]*(\d+)$/.exec(range);
  if (!match) return null;
  return [Number(match[1]), match[2] === undefined || Number.isNaN(Number(match[2])) ? 0 : Number(match[2])];
}

/** Same major (and, below 1.0, same minor: 0.x minors break) as ours. */
function compatible(theirs: string, ours: string): boolean {
  const a = majorMinor(theirs);
  const b = majorMinor(ours);
  if (!a || !b) return true; // a tag, a git URL, a workspace: not ours to judge
  return a[0] === b[0] && (b[0] !== 0 || a[1] === b[1]);
}

// Needed by the toolkit but imported only by the app around it, not by the copied files.
const ALWAYS = ["next"];
// The lowest majors the copied code works with (route handlers' Promise params need Next 15).
const MINIMUM_MAJOR: Record<string, number> = { next: 15, react: 19 };

export function adviseDependencies(ours: PackageJson, theirs: PackageJson, used: string[]): DependencyAdvice {
  const ourRuntime = ours.dependencies ?? {};
  const ourDev = ours.devDependencies ?? {};
  const have: Deps = { ...theirs.devDependencies, ...theirs.dependencies };
  const advice: DependencyAdvice = { install: [], installDev: [], warnings: [] };

  for (const name of [...new Set([...ALWAYS, ...used])].sort()) {
    const version = ourRuntime[name];
    if (version === undefined) {
      advice.warnings.push(
        `the toolkit imports "${name}", which this repository's package.json does not list: install it yourself`,
      );
      continue;
    }
    const theirVersion = have[name];
    const minimum = MINIMUM_MAJOR[name];
    if (theirVersion === undefined) {
      advice.install.push(`${name}@${version}`);
    } else if (minimum !== undefined) {
      const parsed = majorMinor(theirVersion);
      if (parsed && parsed[0] < minimum)
        advice.warnings.push(
          `${name} ${theirVersion}: the toolkit needs ${name} ${minimum} or later (tested with ${version})`,
        );
    } else if (!compatible(theirVersion, version)) {
      advice.warnings.push(
        `${name} ${theirVersion}: the toolkit is tested with ${version}; a different major (or 0.x minor) may not work`,
      );
    }
    // The copied TypeScript imports these packages' types: without them the build's type check fails.
    const types = `@types/${name.replace(/^@([^/]+)\//, "$1__")}`;
    if (ourDev[types] !== undefined && have[types] === undefined) advice.installDev.push(`${types}@${ourDev[types]}`);
  }
  return advice;
}
