// `npm install` in a fresh clone prints no EBADENGINE warning: no package this repository lists
// (dependencies and devDependencies) declares an `engines.node` that excludes the Node 20 it runs
// on. graphile-worker and pg-boss (Node >= 22) did, for the bench's peers section only: they are
// installed on demand (scripts/bench/peer-packages.ts; docs/performance.md, "Peers").
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const REPO = path.join(__dirname, "../..");
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.split(".").map((part) => Number.parseInt(part, 10) || 0);
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** One comparator of a range (`>=20.6.0`, `^18.19.0`, `>= 20`, `20`, `20.x`), as npm reads it. */
function satisfiesComparator(version: Version, comparator: string): boolean {
  const match = /^(\^|~|>=|<=|>|<|=)?\s*v?(\d+(?:\.(?:\d+|x|\*))?(?:\.(?:\d+|x|\*))?)$/.exec(comparator);
  if (!match) throw new Error(`a range this test cannot read: "${comparator}"`);
  const [, op = "", text = ""] = match;
  const parts = text.split(".").filter((part) => /^\d+$/.test(part)).length;
  const bound = parse(text);
  const diff = compare(version, bound);
  if (op === ">=") return diff >= 0;
  if (op === ">") return diff > 0;
  if (op === "<=") return diff <= 0;
  if (op === "<") return diff < 0;
  if (op === "^") return diff >= 0 && version[0] === bound[0] && (bound[0] !== 0 || version[1] === bound[1]);
  if (op === "~") return diff >= 0 && version[0] === bound[0] && (parts < 2 || version[1] === bound[1]);
  // A bare or `=` version: its given parts must match (`20` is any 20.x).
  return bound.slice(0, Math.max(parts, 1)).every((n, i) => version[i] === n);
}

/** An npm range: alternatives joined by `||`, each a space-separated set of comparators. */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split("||").some((alternative) =>
    alternative
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1")
      .split(/\s+/)
      .filter((c) => c !== "" && c !== "*")
      .every((comparator) => satisfiesComparator(v, comparator)),
  );
}

describe("the packages npm install brings", () => {
  it("reads ranges as npm does", () => {
    expect(satisfies("20.20.2", ">=22")).toBe(false);
    expect(satisfies("20.20.2", ">= 20")).toBe(true);
    expect(satisfies("20.20.2", "^18.19.0 || >=20.6.0")).toBe(true);
    expect(satisfies("20.9.0", "^20.19.0 || >=22.12.0")).toBe(false);
    expect(satisfies("20.20.2", "^20.0.0 || ^22.0.0 || >=24.0.0")).toBe(true);
    expect(satisfies("20.20.2", "18 || 20")).toBe(true);
    expect(satisfies("20.20.2", ">=18 <20")).toBe(false);
  });

  it("all admit Node 20 (no EBADENGINE warning at npm install)", () => {
    // The Node 20 this runs on; on a newer Node, the 20 release the dev tools ask for (vite: 20.19).
    const node20 = process.versions.node.startsWith("20.") ? process.versions.node : "20.19.0";
    const pkg = readJson(path.join(REPO, "package.json"));
    const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
    const excluding = names.flatMap((name) => {
      const file = path.join(REPO, "node_modules", name, "package.json");
      expect(existsSync(file), `${name} is not installed`).toBe(true);
      const range = readJson(file).engines?.node;
      return typeof range === "string" && !satisfies(node20, range) ? [`${name} (${range})`] : [];
    });
    expect(excluding).toEqual([]);
  });
});
