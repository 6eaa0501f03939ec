// The peers' packages (graphile-worker, pg-boss, DBOS), installed on demand for `npm run bench --
// --peers` only, not by every `npm install` of this repository: graphile-worker and pg-boss declare
// Node >= 22 in `engines`, so as devDependencies they made a fresh clone's install print EBADENGINE
// warnings on Node 20 (where the bench runs them fine), and none is needed but by this section.
// They go into scripts/bench/node_modules (git-ignored), where Node, tsx and esbuild resolve the
// bench's imports of them from, at the exact versions below (docs/performance.md, "Peers").
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** The versions the figures in docs/performance.md were taken with: exact, so a re-run compares. */
export const PEER_PACKAGES = {
  "graphile-worker": "0.18.0",
  "pg-boss": "12.38.0",
  "@dbos-inc/dbos-sdk": "5.3.0",
} as const;
export type PeerPackage = keyof typeof PEER_PACKAGES;

/** Where they are installed: beside the bench's files, so their imports resolve there first. */
export const PEER_PREFIX = import.meta.dirname;

/** The installed version of a peer's package; null when it is not installed. */
export function installedPeerVersion(name: PeerPackage): string | null {
  const file = path.join(PEER_PREFIX, "node_modules", name, "package.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version : null;
}

/** Installs the peers' packages at their pinned versions unless they are there already. */
export function ensurePeerPackages(): void {
  const wanted = Object.entries(PEER_PACKAGES).filter(
    ([name, version]) => installedPeerVersion(name as PeerPackage) !== version,
  );
  if (wanted.length === 0) return;
  const specs = wanted.map(([name, version]) => `${name}@${version}`);
  const where = path.join(path.relative(process.cwd(), PEER_PREFIX), "node_modules");
  console.log(`Installing the peers for --peers into ${where}: ${specs.join(" ")}`);
  // --no-save: no package.json there (one would change the module type of the bench's files);
  // engine-strict off: they declare Node >= 22 and run on 20.
  const args = ["install", "--prefix", PEER_PREFIX, "--no-save", "--no-package-lock", "--no-audit", "--no-fund"];
  const result = spawnSync("npm", [...args, "--engine-strict=false", "--loglevel=error", ...specs], {
    stdio: "inherit",
  });
  if (result.status !== 0) throw new Error(`npm install of ${specs.join(" ")} failed (exit ${result.status})`);
}
