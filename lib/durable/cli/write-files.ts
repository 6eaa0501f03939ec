// Writes the files a tool plans into an app, never over a file it did not write: a missing file is
// created; one with the planned text is left as it is; one the record says the tool wrote, and
// still holds exactly that, is replaced by the planned text (a newer version's); anything else is
// the app's and is kept.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type FileHashes, sameText, sha256 } from "./manifest";

export interface PlannedWrite {
  /** Path in the app, with `/` separators. */
  dest: string;
  content: string;
}

export type WriteOutcome = "created" | "same" | "updated" | "kept";

/** What would happen to one file; touches nothing. */
export function writeOutcome(target: string, file: PlannedWrite, recorded: FileHashes): WriteOutcome {
  const full = path.join(target, file.dest);
  if (!existsSync(full)) return "created";
  const current = readFileSync(full, "utf8");
  if (sameText(current, file.content)) return "same";
  return recorded[file.dest] === sha256(current) ? "updated" : "kept";
}

/** Writes each planned file by its outcome (nothing with `dryRun`) and answers the outcomes. */
export function writeFiles(
  target: string,
  planned: PlannedWrite[],
  recorded: FileHashes,
  dryRun: boolean,
): Map<string, WriteOutcome> {
  const outcomes = new Map<string, WriteOutcome>();
  for (const file of planned) {
    const outcome = writeOutcome(target, file, recorded);
    outcomes.set(file.dest, outcome);
    if (dryRun || (outcome !== "created" && outcome !== "updated")) continue;
    const full = path.join(target, file.dest);
    mkdirSync(path.dirname(full), { recursive: true });
    // wx: a file that appeared since it was planned fails the write rather than being overwritten.
    writeFileSync(full, file.content, { flag: outcome === "created" ? "wx" : "w" });
  }
  return outcomes;
}

/**
 * The record after a run: the earlier entries, plus the planned text of every file that now holds
 * it (created, updated or already the same); a kept file keeps its earlier entry, if any.
 */
export function recordedAfter(planned: PlannedWrite[], outcomes: Map<string, WriteOutcome>, before: FileHashes) {
  const files = { ...before };
  for (const file of planned) if (outcomes.get(file.dest) !== "kept") files[file.dest] = sha256(file.content);
  return files;
}
