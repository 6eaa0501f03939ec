// The record add-to-app keeps in the other app: every file it wrote and the SHA-256 of what it
// wrote, with the toolkit version. `--update` compares an app's file with it to tell a file the
// app never touched (safe to replace) from one the app changed (kept, and the diff printed).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readRecord, sameEntries, sameText, sha256, sortedEntries } from "../../lib/durable/cli/manifest";

export { sameEntries, sameText, sha256 };

export const MANIFEST_NAME = ".add-to-app.json";

/** Where the manifest lives in the other app: inside the copied folder, so it travels with it. */
export const manifestPath = (base: string) => `${base}lib/durable/${MANIFEST_NAME}`;

export interface ToolkitVersion {
  /** This repository's package.json version. */
  version: string;
  /** The commit the files came from, when this repository is a git checkout. */
  commit?: string;
  /** The copied sources had changes not committed yet. */
  uncommitted?: true;
}

export interface Manifest {
  toolkit: ToolkitVersion;
  /** Path in the app (with `/`) → SHA-256 (hex) of the content add-to-app wrote there. */
  files: Record<string, string>;
}

export function toolkitVersion(root: string, sources: string[]): ToolkitVersion {
  const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  const git = (...args: string[]) => spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
  const head = git("rev-parse", "HEAD");
  if (head.status !== 0) return { version };
  const dirty = git("status", "--porcelain", "--", ...sources).stdout.trim() !== "";
  return { version, commit: head.stdout.trim(), ...(dirty ? { uncommitted: true as const } : {}) };
}

export type ManifestRead = { manifest: Manifest | null; problem?: string };

/** The app's manifest; null when there is none or it cannot be used (`problem` says why). */
export function readManifest(target: string, base: string): ManifestRead {
  const read = readRecord(path.join(target, manifestPath(base)));
  if (read === null) return { manifest: null };
  if ("problem" in read)
    return { manifest: null, problem: `${manifestPath(base)} is not a manifest add-to-app can read (${read.problem})` };
  const toolkit = (read.record.toolkit as ToolkitVersion | undefined) ?? { version: "unknown" };
  return { manifest: { toolkit, files: read.record.files } };
}

export function manifestText(toolkit: ToolkitVersion, files: Record<string, string>): string {
  const sorted = sortedEntries(files);
  const about =
    "Written by durable-next's add-to-app: each file it wrote here and the SHA-256 of what it wrote. " +
    "`add-to-app --update` replaces the files you did not change and shows a diff for the others. Keep it.";
  return `${JSON.stringify({ about, toolkit, files: sorted }, null, 2)}\n`;
}

export function writeManifest(target: string, base: string, text: string) {
  const file = path.join(target, manifestPath(base));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
