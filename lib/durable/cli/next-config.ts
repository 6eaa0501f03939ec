// The app's next.config gets two settings, each added only when the edit is plain: PGlite in
// serverExternalPackages (it loads its WebAssembly from its package folder, so it must not be
// bundled) and localhost and 127.0.0.1 in allowedDevOrigins (next dev serves its dev resources
// only to the host it was started for, so a page opened at the other address renders but never
// hydrates). A config that is not plain to edit is left alone and the exact lines are printed.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ConfigChange } from "./config-edits";
import { findObjectEnd } from "./object-literal";
import { nextConfigFile } from "./templates";

const CONFIG_NAMES = ["next.config.ts", "next.config.mts", "next.config.mjs", "next.config.js", "next.config.cjs"];
export const PGLITE = "@electric-sql/pglite";
export const DEV_ORIGINS = ["localhost", "127.0.0.1"];

const quoted = (value: string) => JSON.stringify(value);
export const PGLITE_LINE = `serverExternalPackages: [${quoted(PGLITE)}],`;
export const DEV_ORIGINS_LINE = `allowedDevOrigins: [${DEV_ORIGINS.map(quoted).join(", ")}],`;

/** One setting's edit of the config text: the new text, or why it was left alone. */
type Edit = { text: string; outcome: "edited" | "unchanged"; note: string } | { outcome: "manual"; note: string };

/** The `{` of the object the config exports, as create-next-app and most apps write it; null unless exactly one. */
function configObject(text: string): number | null {
  const found = [
    ...text.matchAll(/(?:const\s+\w+\s*(?::\s*NextConfig\s*)?=|export\s+default|module\.exports\s*=)\s*\{/g),
  ];
  return found.length === 1 ? found[0]!.index! + found[0]![0].length - 1 : null;
}

const includesQuoted = (text: string, value: string) => text.includes(`"${value}"`) || text.includes(`'${value}'`);

/** The one `name: [` list of the text: the offsets just after its `[` and of its `]`; null unless exactly one. */
function literalList(text: string, name: string): { start: number; end: number } | null {
  const found = [...text.matchAll(new RegExp(`\\b${name}\\s*:\\s*\\[`, "g"))];
  if (found.length !== 1) return null;
  const start = found[0]!.index! + found[0]![0].length;
  const end = text.indexOf("]", start);
  return end === -1 ? null : { start, end };
}

/** Puts `values` at the head of a list, keeping what it held. */
function prepend(text: string, list: { start: number; end: number }, values: string[]): string {
  const empty = text.slice(list.start, list.end).trim() === "";
  const items = values.map(quoted).join(", ");
  return `${text.slice(0, list.start)}${items}${empty ? "" : ", "}${text.slice(empty ? list.end : list.start)}`;
}

function addPglite(text: string): Edit {
  if (includesQuoted(text, PGLITE)) return { text, outcome: "unchanged", note: `already lists ${PGLITE}` };
  const note = `added "${PGLITE}" to serverExternalPackages`;
  const list = literalList(text, "serverExternalPackages");
  if (list) return { text: prepend(text, list, [PGLITE]), outcome: "edited", note };
  const open = configObject(text);
  if (/\bserverExternalPackages\b/.test(text) || open === null) return { outcome: "manual", note: PGLITE_LINE };
  // Right after the brace, where add-to-app has always put it.
  const close = findObjectEnd(text, open)?.close;
  const empty = close !== undefined && text.slice(open + 1, close).trim() === "";
  const line = `\n  ${PGLITE_LINE}${empty ? "\n" : ""}`;
  return { text: `${text.slice(0, open + 1)}${line}${text.slice(open + 1)}`, outcome: "edited", note };
}

function addDevOrigins(text: string): Edit {
  const list = literalList(text, "allowedDevOrigins");
  if (list) {
    const missing = DEV_ORIGINS.filter((origin) => !includesQuoted(text.slice(list.start, list.end), origin));
    if (missing.length === 0) return { text, outcome: "unchanged", note: `already allows ${DEV_ORIGINS.join(", ")}` };
    return {
      text: prepend(text, list, missing),
      outcome: "edited",
      note: `added ${missing.join(", ")} to allowedDevOrigins`,
    };
  }
  const open = configObject(text);
  const end = open === null ? null : findObjectEnd(text, open);
  if (/\ballowedDevOrigins\b/.test(text) || open === null || !end) return { outcome: "manual", note: DEV_ORIGINS_LINE };
  // At the end of the object: after its last property, with the comma that property may lack.
  const comma = text[end.lastCode] === "," || end.lastCode === open ? "" : ",";
  const lineStart = text.lastIndexOf("\n", end.close - 1) + 1;
  const ownLine = text.slice(lineStart, end.close).trim() === "" && lineStart > end.lastCode;
  const indent = /\n([ \t]+)\S/.exec(text.slice(open, end.close))?.[1] ?? "  ";
  const before = text.slice(0, end.lastCode + 1) + comma;
  const added = ownLine
    ? `${text.slice(end.lastCode + 1, lineStart)}${indent}${DEV_ORIGINS_LINE}\n${text.slice(lineStart, end.close)}`
    : `\n${indent}${DEV_ORIGINS_LINE}\n`;
  const note = `added ${DEV_ORIGINS_LINE.replace(/,$/, "")} (pages opened at 127.0.0.1 hydrate under next dev)`;
  return { text: `${before}${added}${text.slice(end.close)}`, outcome: "edited", note };
}

/** What a manual edit of the file asks for: the lines to add to the object the config exports. */
const manualNote = (lines: string[], why: string) =>
  `${why}: add to the object it exports:\n${lines.map((line) => `      ${line}`).join("\n")}`;

/**
 * Both settings in the app's next.config: a new file when it has none, else one plain edit each
 * (a change line per setting), the file written once.
 */
export function editNextConfig(target: string, typescript: boolean, dryRun: boolean): ConfigChange[] {
  const existing = CONFIG_NAMES.filter((name) => existsSync(path.join(target, name)));
  if (existing.length === 0) {
    const name = typescript ? "next.config.ts" : "next.config.mjs";
    if (!dryRun) writeFileSync(path.join(target, name), nextConfigFile(typescript), { flag: "wx" });
    return [{ file: name, outcome: "created", note: `with ${PGLITE_LINE} ${DEV_ORIGINS_LINE}` }];
  }
  const file = existing[0]!;
  if (existing.length > 1)
    return [
      {
        file,
        outcome: "manual",
        note: manualNote([PGLITE_LINE, DEV_ORIGINS_LINE], "is one of several next.config files"),
      },
    ];
  const original = readFileSync(path.join(target, file), "utf8");
  let text = original;
  const changes: ConfigChange[] = [];
  for (const edit of [addPglite, addDevOrigins]) {
    const result = edit(text);
    if (result.outcome === "manual") {
      changes.push({ file, outcome: "manual", note: manualNote([result.note], "could not be edited safely") });
      continue;
    }
    text = result.text;
    changes.push({ file, outcome: result.outcome, note: result.note });
  }
  if (text !== original && !dryRun) writeFileSync(path.join(target, file), text);
  return changes;
}
