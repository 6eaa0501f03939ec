// The other app's own config files, edited only by adding what the toolkit needs and only when
// the edit is plain: the cron in vercel.json, PGlite in serverExternalPackages, .durable/ in
// .gitignore, the local cron in a new instrumentation file. Anything less plain is left alone and
// reported as a step for the user.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEV_CRON_CALL, instrumentationFile, nextConfigFile } from "./templates";

export interface ConfigChange {
  file: string;
  outcome: "created" | "edited" | "unchanged" | "manual";
  note: string;
}

export interface Cron {
  path: string;
  schedule: string;
}

/** Adds our cron to vercel.json (creating the file when there is none); other keys and crons stay. */
export function mergeVercelCron(target: string, cron: Cron, dryRun: boolean): ConfigChange {
  const file = path.join(target, "vercel.json");
  const entry = `${JSON.stringify(cron)}`;
  if (!existsSync(file)) {
    const created = { $schema: "https://openapi.vercel.sh/vercel.json", crons: [cron] };
    if (!dryRun) writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { flag: "wx" });
    return { file: "vercel.json", outcome: "created", note: `with the cron ${entry}` };
  }
  const text = readFileSync(file, "utf8");
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(text);
    if (config === null || typeof config !== "object" || Array.isArray(config)) throw new Error("not an object");
  } catch {
    return {
      file: "vercel.json",
      outcome: "manual",
      note: `is not a JSON object: add ${entry} to its "crons" yourself`,
    };
  }
  const crons = config.crons;
  if (crons !== undefined && !Array.isArray(crons)) {
    return { file: "vercel.json", outcome: "manual", note: `"crons" is not a list: add ${entry} yourself` };
  }
  if ((crons ?? []).some((c) => (c as Cron | null)?.path === cron.path)) {
    return { file: "vercel.json", outcome: "unchanged", note: `already calls ${cron.path}` };
  }
  config.crons = [...(crons ?? []), cron];
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? 2;
  if (!dryRun) writeFileSync(file, `${JSON.stringify(config, null, indent)}\n`);
  return { file: "vercel.json", outcome: "edited", note: `added the cron ${entry}` };
}

const CONFIG_NAMES = ["next.config.ts", "next.config.mts", "next.config.mjs", "next.config.js", "next.config.cjs"];
const PACKAGE = "@electric-sql/pglite";
const ADVICE = `add serverExternalPackages: ["${PACKAGE}"] to it (PGlite must not be bundled)`;

/** Puts PGlite in serverExternalPackages: a new next.config, or one plain insertion into the existing one. */
export function addServerExternalPackage(target: string, typescript: boolean, dryRun: boolean): ConfigChange {
  const existing = CONFIG_NAMES.filter((name) => existsSync(path.join(target, name)));
  if (existing.length === 0) {
    const name = typescript ? "next.config.ts" : "next.config.mjs";
    if (!dryRun) writeFileSync(path.join(target, name), nextConfigFile(typescript), { flag: "wx" });
    return { file: name, outcome: "created", note: `with serverExternalPackages: ["${PACKAGE}"]` };
  }
  const name = existing[0]!;
  if (existing.length > 1)
    return { file: name, outcome: "manual", note: `is one of several next.config files: ${ADVICE}` };
  const file = path.join(target, name);
  const text = readFileSync(file, "utf8");
  if (text.includes(`"${PACKAGE}"`) || text.includes(`'${PACKAGE}'`)) {
    return { file: name, outcome: "unchanged", note: `already lists ${PACKAGE}` };
  }
  let edited: string | null = null;
  const list = [...text.matchAll(/serverExternalPackages\s*:\s*\[/g)];
  if (list.length === 1) {
    const at = list[0]!.index! + list[0]![0].length;
    edited = `${text.slice(0, at)}"${PACKAGE}", ${text.slice(at)}`;
  } else if (list.length === 0) {
    // The config object literal, as create-next-app and most apps write it.
    const objects = [
      ...text.matchAll(/(?:const\s+\w+\s*(?::\s*NextConfig\s*)?=|export\s+default|module\.exports\s*=)\s*\{/g),
    ];
    if (objects.length === 1) {
      const at = objects[0]!.index! + objects[0]![0].length;
      edited = `${text.slice(0, at)}\n  serverExternalPackages: ["${PACKAGE}"],${text.slice(at)}`;
    }
  }
  if (edited === null) return { file: name, outcome: "manual", note: `could not be edited safely: ${ADVICE}` };
  if (!dryRun) writeFileSync(file, edited);
  return { file: name, outcome: "edited", note: `added "${PACKAGE}" to serverExternalPackages` };
}

/** Adds .durable/ (PGlite's data when DATABASE_URL is unset) to an existing .gitignore. */
export function ignoreDurableDir(target: string, dryRun: boolean): ConfigChange {
  const file = path.join(target, ".gitignore");
  if (!existsSync(file))
    return {
      file: ".gitignore",
      outcome: "manual",
      note: "does not exist: keep .durable/ (local PGlite data) out of git",
    };
  const text = readFileSync(file, "utf8");
  if (/^\/?\.durable\/?\s*$/m.test(text))
    return { file: ".gitignore", outcome: "unchanged", note: "already ignores .durable/" };
  const separator = text.endsWith("\n") || text.length === 0 ? "" : "\n";
  const addition = `${separator}\n# durable-next: local PGlite data (DATABASE_URL unset)\n.durable/\n`;
  if (!dryRun) writeFileSync(file, text + addition);
  return { file: ".gitignore", outcome: "edited", note: "added .durable/" };
}

const INSTRUMENTATION_NAMES = ["instrumentation.ts", "instrumentation.js", "instrumentation.mjs"];

/**
 * Starts the local cron under `next dev` from the app's instrumentation file (`base` is "" or
 * "src/", where Next looks for it): a new file when there is none; an existing one is the app's,
 * so the lines to add are printed instead.
 */
export function addDevCron(target: string, base: string, typescript: boolean, dryRun: boolean): ConfigChange {
  const existing = INSTRUMENTATION_NAMES.map((name) => base + name).find((rel) => existsSync(path.join(target, rel)));
  if (!existing) {
    const rel = `${base}instrumentation.${typescript ? "ts" : "js"}`;
    if (!dryRun) writeFileSync(path.join(target, rel), instrumentationFile(), { flag: "wx" });
    return { file: rel, outcome: "created", note: "starts a local cron under next dev (calls the tick every 5 s)" };
  }
  if (readFileSync(path.join(target, existing), "utf8").includes("startDevCron")) {
    return { file: existing, outcome: "unchanged", note: "already starts the local cron" };
  }
  return {
    file: existing,
    outcome: "manual",
    note: `is your app's: so that runs tick under next dev, add to its register():\n    ${DEV_CRON_CALL}`,
  };
}
