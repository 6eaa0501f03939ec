// `add-to-app --update`: brings an app's copy up to this version. With the manifest (what an
// earlier add-to-app wrote, by hash) a file the app did not change is replaced, a changed one is
// kept and its diff printed, and a file the toolkit no longer has is deleted when unchanged.
// Without a manifest (a copy older than manifests) only a file equal to this version counts as
// unchanged. app/durable.ts is the app's workflow registry: written when missing, never replaced.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { unifiedDiff } from "./diff";
import { type Manifest, manifestPath, sameText, sha256 } from "./manifest";
import { isCopied, type PlannedFile } from "./plan";

export type UpdateOutcome = "written" | "replaced" | "unchanged" | "kept" | "deleted" | "left" | "registry";

export interface UpdateAction {
  dest: string;
  group: PlannedFile["group"];
  outcome: UpdateOutcome;
  /** What to write, for "written" and "replaced". */
  content?: string;
  /** Why a file was kept or left. */
  note?: string;
  /** The app's version → this version, for "kept". */
  diff?: string;
}

export interface UpdatePlan {
  actions: UpdateAction[];
  /** The manifest's entries once the actions are done. */
  files: Record<string, string>;
}

const groupOf = (dest: string, base: string): PlannedFile["group"] =>
  dest.startsWith(`${base}app/api/durable/`) ? "route" : dest === `${base}app/durable.ts` ? "instance" : "toolkit";

/** A path add-to-app could have written: in the toolkit's folders, no `..` (the manifest is the app's file). */
function isOurPath(dest: string, base: string): boolean {
  if (path.posix.normalize(dest) !== dest || dest.split("/").includes("..")) return false;
  return (
    [`${base}lib/durable/`, `${base}app/api/durable/`].some((root) => dest.startsWith(root)) ||
    dest === `${base}app/durable.ts`
  );
}

const diffOf = (dest: string, theirs: string, ours: string) => unifiedDiff(theirs, ours, `a/${dest}`, `b/${dest}`);

/** Decides what happens to each file; touches nothing. */
export function planUpdate(
  target: string,
  planned: PlannedFile[],
  manifest: Manifest | null,
  base: string,
): UpdatePlan {
  const actions: UpdateAction[] = [];
  const files: Record<string, string> = {};
  const recorded = manifest?.files ?? {};

  for (const file of planned) {
    const { dest, group, content } = file;
    const full = path.join(target, dest);
    if (!existsSync(full)) {
      actions.push({ dest, group, outcome: "written", content });
      files[dest] = sha256(content);
      continue;
    }
    const current = readFileSync(full, "utf8");
    const hash = recorded[dest];
    if (sameText(current, content)) {
      actions.push({ dest, group, outcome: "unchanged" });
      files[dest] = sha256(content);
    } else if (group === "instance") {
      // The app registers its workflows here: never replaced. A diff only when our template changed
      // since it was written (the manifest says what was written), since then there is something to adopt.
      if (hash !== undefined) files[dest] = hash;
      const templateChanged = hash !== undefined && hash !== sha256(content);
      actions.push({
        dest,
        group,
        outcome: templateChanged ? "kept" : "registry",
        note: templateChanged
          ? "your workflow registry, never replaced; this version's template changed: adopt what you need from the diff"
          : "your workflow registry, never replaced by --update",
        ...(templateChanged ? { diff: diffOf(dest, current, content) } : {}),
      });
    } else if (hash !== undefined && sha256(current) === hash) {
      actions.push({ dest, group, outcome: "replaced", content });
      files[dest] = sha256(content);
    } else {
      if (hash !== undefined) files[dest] = hash; // still what add-to-app last wrote there
      const note =
        hash !== undefined
          ? "changed in your app since add-to-app wrote it"
          : manifest
            ? "your app's own file, not written by add-to-app"
            : "differs from this version; without a manifest an older copy and your edit look the same";
      actions.push({ dest, group, outcome: "kept", note, diff: diffOf(dest, current, content) });
    }
  }

  planGoneFiles(target, planned, manifest, base, actions, files);
  return { actions, files };
}

/** The files add-to-app wrote that this version no longer has: deleted, or left with a note; touches nothing. */
function planGoneFiles(
  target: string,
  planned: PlannedFile[],
  manifest: Manifest | null,
  base: string,
  actions: UpdateAction[],
  files: Record<string, string>,
): void {
  const recorded = manifest?.files ?? {};
  const inPlan = new Set(planned.map((f) => f.dest));
  if (manifest) {
    // Written by an earlier version, gone from this one.
    for (const [dest, hash] of Object.entries(recorded)) {
      if (inPlan.has(dest) || dest === manifestPath(base) || !isOurPath(dest, base)) continue;
      const full = path.join(target, dest);
      if (!existsSync(full)) continue; // already gone: dropped from the manifest
      const group = groupOf(dest, base);
      if (sha256(readFileSync(full, "utf8")) === hash) {
        actions.push({ dest, group, outcome: "deleted", note: "no longer part of the toolkit" });
      } else {
        files[dest] = hash;
        actions.push({
          dest,
          group,
          outcome: "left",
          note: "no longer part of the toolkit, but changed in your app: delete it once nothing uses it",
        });
      }
    }
  } else {
    // No record of what an older version wrote: point out what it might have left behind, delete nothing.
    for (const dest of filesUnder(target, `${base}lib/durable`)) {
      if (inPlan.has(dest)) continue;
      actions.push({
        dest,
        group: "toolkit",
        outcome: "left",
        note: "not in this version, perhaps an older version's file: delete it if nothing of yours uses it",
      });
    }
  }
}

function filesUnder(target: string, rel: string): string[] {
  const dir = path.join(target, rel);
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(target, child));
    else if (entry.isFile() && isCopied(entry.name)) out.push(child);
  }
  return out.sort();
}

/** Does what `planUpdate` decided. Deleting a file also removes the folders it leaves empty inside the toolkit. */
export function applyUpdate(target: string, actions: UpdateAction[], base: string) {
  const roots = new Set([`${base}lib/durable`, `${base}app/api/durable`].map((r) => path.join(target, r)));
  for (const action of actions) {
    const full = path.join(target, action.dest);
    if (action.outcome === "written" || action.outcome === "replaced") {
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, action.content!, { flag: action.outcome === "written" ? "wx" : "w" });
    } else if (action.outcome === "deleted") {
      rmSync(full);
      let dir = path.dirname(full);
      while ([...roots].some((root) => dir.startsWith(`${root}${path.sep}`)) && readdirSync(dir).length === 0) {
        rmdirSync(dir);
        dir = path.dirname(dir);
      }
    }
  }
}

/**
 * The db/ files earlier versions copied (table types, the generated SQL module, the migrations),
 * when they look like ours. The toolkit no longer reads them; they are in the app's db/, so they
 * are pointed out and never deleted.
 */
export function oldLayoutCopies(target: string, base: string): string[] {
  const db = `${base}db`;
  const looksOurs = (rel: string, mark: RegExp) => {
    const full = path.join(target, rel);
    return existsSync(full) && mark.test(readFileSync(full, "utf8"));
  };
  const found: string[] = [];
  if (looksOurs(`${db}/schema.ts`, /\bDurableRunsTable\b/)) found.push(`${db}/schema.ts`);
  if (looksOurs(`${db}/migrations.generated.ts`, /\bdurable_runs\b/)) found.push(`${db}/migrations.generated.ts`);
  const migrations = path.join(target, db, "migrations");
  if (existsSync(migrations))
    for (const name of readdirSync(migrations).sort())
      if (/^\d+_.*\.sql$/.test(name) && looksOurs(`${db}/migrations/${name}`, /\bdurable_\w+/))
        found.push(`${db}/migrations/${name}`);
  return found;
}

const GROUPS: { group: PlannedFile["group"]; label: (base: string) => string }[] = [
  { group: "toolkit", label: (base) => `${base}lib/durable/` },
  { group: "route", label: (base) => `${base}app/api/durable/` },
  { group: "instance", label: (base) => `${base}app/durable.ts` },
];

/** Prints the per-group counts and each file that was not unchanged. */
export function reportUpdate(actions: UpdateAction[], base: string, dryRun: boolean) {
  const would = (done: string, toDo: string) => (dryRun ? toDo : done);
  console.log(`\nFiles (--update${dryRun ? ", dry run" : ""})`);
  for (const { group, label } of GROUPS) {
    const count = (outcome: UpdateOutcome) => actions.filter((a) => a.group === group && a.outcome === outcome).length;
    const counts = [
      `${count("written")} ${would("written", "to write")}`,
      `${count("replaced")} ${would("replaced", "to replace")}`,
      `${count("unchanged")} unchanged`,
      `${count("kept")} kept with a diff`,
      `${count("deleted")} ${would("deleted", "to delete")}`,
    ];
    if (count("left") > 0) counts.push(`${count("left")} left (no longer used)`);
    if (count("registry") > 0) counts.push(`${count("registry")} kept (your registry)`);
    console.log(`  ${label(base).padEnd(18)} ${counts.join(", ")}`);
  }
  const verbs: Partial<Record<UpdateOutcome, string>> = {
    written: dryRun ? "would write" : "written",
    replaced: dryRun ? "would replace" : "replaced",
    deleted: dryRun ? "would delete" : "deleted",
    kept: "kept",
    left: "left",
    registry: "kept",
  };
  for (const action of actions) {
    const verb = verbs[action.outcome];
    if (verb) console.log(`    ${verb.padEnd(13)} ${action.dest}${action.note ? `: ${action.note}` : ""}`);
  }
}

/** The diffs of the files kept because the app changed them: from the app's file (a/) to this version (b/). */
export function reportDiffs(actions: UpdateAction[]) {
  const kept = actions.filter((a) => a.diff);
  if (kept.length === 0) return;
  console.log(`\nKept with a diff: ${kept.length} file(s) differ from this version and were not replaced`);
  console.log("  Each diff goes from your file (a/) to this version (b/): take what you need by hand, or save");
  console.log("  it to a file and run `git apply <file>` in your app to take all of it.");
  for (const action of kept) console.log(`\n${action.diff!.trimEnd()}`);
}
