// Which npm packages the other app needs for the copied files, at the versions this repository
// pins (and tests with). add-to-app prints the install command; it never edits package.json.

import { compatible, MINIMUM_MAJOR, majorMinor, type PackageJson } from "../../lib/durable/cli/versions";

export type { PackageJson };
type Deps = Record<string, string>;

export interface DependencyAdvice {
  install: string[];
  installDev: string[];
  warnings: string[];
}

// Needed by the toolkit but imported only by the app around it, not by the copied files.
const ALWAYS = ["next"];

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
