// What the tools print about the files they wrote and the config they edited: a line a file, a
// line a config change, and TO DO where the user has a step to take.
import type { ConfigChange } from "./config-edits";
import type { WriteOutcome } from "./write-files";

/** The verb of one file's outcome, in the past or, with `dryRun`, the conditional. */
export function writeVerb(outcome: WriteOutcome, dryRun: boolean): string {
  if (outcome === "created") return dryRun ? "would create" : "created";
  if (outcome === "updated") return dryRun ? "would update" : "updated";
  return outcome === "same" ? "already there" : "kept as is";
}

const WRITE_NOTES: Partial<Record<WriteOutcome, string>> = {
  updated: " (written by an earlier init, unchanged since: now this version's text)",
  kept: " (exists and differs: not overwritten)",
};

/** A line per file. */
export function reportWrites(outcomes: Map<string, WriteOutcome>, dryRun: boolean) {
  for (const [dest, outcome] of outcomes)
    console.log(`  ${writeVerb(outcome, dryRun).padEnd(13)} ${dest}${WRITE_NOTES[outcome] ?? ""}`);
}

/** A line per config change. */
export function reportConfig(changes: ConfigChange[], dryRun: boolean) {
  console.log(`\nConfig`);
  for (const c of changes) {
    const verb =
      c.outcome === "manual" ? "TO DO" : dryRun && c.outcome !== "unchanged" ? `would be ${c.outcome}` : c.outcome;
    console.log(`  ${c.file.padEnd(22)} ${verb}: ${c.note}`);
  }
}
