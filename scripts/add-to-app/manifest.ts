// The record add-to-app keeps in the other app: every file it wrote and the SHA-256 of what it
// wrote, with the toolkit version. `--update` compares an app's file with it to tell a file the
// app never touched (safe to replace) from one the app changed (kept, and the diff printed).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

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

/** The hash a file is recorded and compared by; CRLF counts as LF, so a checkout's line endings are no edit. */
export const sha256 = (text: string) => createHash("sha256").update(text.replace(/\r\n/g, "\n")).digest("hex");

/** The same text, line endings aside. */
export const sameText = (a: string, b: string) => a === b || sha256(a) === sha256(b);

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
  const file = path.join(target, manifestPath(base));
  if (!existsSync(file)) return { manifest: null };
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Manifest>;
    const files = parsed.files;
    if (!files || typeof files !== "object" || Array.isArray(files)) throw new Error(`no "files" object`);
    for (const [rel, hash] of Object.entries(files))
      if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash)) throw new Error(`bad hash for ${rel}`);
    return { manifest: { toolkit: parsed.toolkit ?? { version: "unknown" }, files } };
  } catch (e) {
    return {
      manifest: null,
      problem: `${manifestPath(base)} is not a manifest add-to-app can read (${(e as Error).message})`,
    };
  }
}

export function manifestText(toolkit: ToolkitVersion, files: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const about =
    "Written by durable-next's add-to-app: each file it wrote here and the SHA-256 of what it wrote. " +
    "`add-to-app --update` replaces the files you did not change and shows a diff for the others. Keep it.";
  return `${JSON.stringify({ about, toolkit, files: sorted }, null, 2)}\n`;
}

/** Same entries (the version stamp aside): nothing new to record. */
export function sameEntries(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

export function writeManifest(target: string, base: string, text: string) {
  const file = path.join(target, manifestPath(base));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
