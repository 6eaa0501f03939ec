// The record a tool keeps in the app of the files it wrote: each path with the SHA-256 of what was
// written there. It tells a file the app never touched (the tool may replace it with a newer
// version's text) from one the app changed or wrote itself (never overwritten). `durable-next init`
// keeps it in .durable-next.json at the app's root; add-to-app in lib/durable/.add-to-app.json.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The hash a file is recorded and compared by; CRLF counts as LF, so a checkout's line endings are no edit. */
export const sha256 = (text: string) => createHash("sha256").update(text.replace(/\r\n/g, "\n")).digest("hex");

/** The same text, line endings aside. */
export const sameText = (a: string, b: string) => a === b || sha256(a) === sha256(b);

/** Path in the app (with `/`) → SHA-256 (hex) of what the tool wrote there. */
export type FileHashes = Record<string, string>;

/** Same entries: nothing new to record. */
export function sameEntries(a: FileHashes, b: FileHashes): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** The entries in path order, so the record's text does not depend on the order files were written. */
export const sortedEntries = (files: FileHashes): FileHashes =>
  Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export type RecordRead = { record: Record<string, unknown> & { files: FileHashes } } | { problem: string } | null;

/** A record file: null when there is none; `problem` when it cannot be used (its `files` are not hashes). */
export function readRecord(file: string): RecordRead {
  if (!existsSync(file)) return null;
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const files = parsed.files;
    if (!files || typeof files !== "object" || Array.isArray(files)) throw new Error(`no "files" object`);
    for (const [rel, hash] of Object.entries(files))
      if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash)) throw new Error(`bad hash for ${rel}`);
    return { record: { ...parsed, files: files as FileHashes } };
  } catch (e) {
    return { problem: (e as Error).message };
  }
}

/** Where `durable-next init` records what it wrote: the app's root, beside package.json. */
export const INIT_RECORD = ".durable-next.json";

export interface InitRecord {
  /** The package version that last wrote a file. */
  version: string;
  files: FileHashes;
}

/** The app's init record; null when there is none, or when it cannot be read (`problem` says why). */
export function readInitRecord(target: string): { record: InitRecord | null; problem?: string } {
  const read = readRecord(path.join(target, INIT_RECORD));
  if (read === null) return { record: null };
  if ("problem" in read)
    return { record: null, problem: `${INIT_RECORD} is not a record init can read (${read.problem})` };
  const version = typeof read.record.version === "string" ? read.record.version : "unknown";
  return { record: { version, files: read.record.files } };
}

export function writeInitRecord(target: string, record: InitRecord) {
  const about =
    "Written by `durable-next init`: each file it wrote here and the SHA-256 of what it wrote. A later init " +
    "replaces only a file whose hash still matches (you did not change it), and never a file of yours. Keep it.";
  const text = JSON.stringify({ about, version: record.version, files: sortedEntries(record.files) }, null, 2);
  writeFileSync(path.join(target, INIT_RECORD), `${text}\n`);
}
