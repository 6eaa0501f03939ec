// The app's own config files, edited only by adding what the toolkit needs and only when the edit
// is plain: the cron in vercel.json, .durable/ in .gitignore, the local cron in a new
// instrumentation file (next.config is next-config.ts). Anything less plain is left alone and
// reported as a step for the user. Shared by `durable-next init` and add-to-app.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type FileHashes, sameText, sha256 } from "./manifest";
import { devCronCall, instrumentationFile } from "./templates";

export interface ConfigChange {
  file: string;
  outcome: "created" | "updated" | "edited" | "unchanged" | "manual";
  note: string;
}

export interface Cron {
  path: string;
  schedule: string;
}

/** The cron every app gets (the reference app's vercel.json has the same; docs/guide/deploying-to-vercel.md). */
export const DURABLE_CRON: Cron = { path: "/api/durable/tick", schedule: "* * * * *" };

/** The app's vercel.json as an object; a string saying why not when it is not one. */
function readVercelJson(file: string): Record<string, unknown> | string {
  try {
    const config = JSON.parse(readFileSync(file, "utf8"));
    if (config !== null && typeof config === "object" && !Array.isArray(config)) return config;
  } catch {}
  return "is not a JSON object";
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
  const config = readVercelJson(file);
  if (typeof config === "string")
    return { file: "vercel.json", outcome: "manual", note: `${config}: add ${entry} to its "crons" yourself` };
  const crons = config.crons;
  if (crons !== undefined && !Array.isArray(crons)) {
    return { file: "vercel.json", outcome: "manual", note: `"crons" is not a list: add ${entry} yourself` };
  }
  if ((crons ?? []).some((c) => (c as Cron | null)?.path === cron.path)) {
    return { file: "vercel.json", outcome: "unchanged", note: `already calls ${cron.path}` };
  }
  config.crons = [...(crons ?? []), cron];
  const indent = /^[ \t]+(?=")/m.exec(readFileSync(file, "utf8"))?.[0] ?? 2;
  if (!dryRun) writeFileSync(file, `${JSON.stringify(config, null, indent)}\n`);
  return { file: "vercel.json", outcome: "edited", note: `added the cron ${entry}` };
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

export interface DevCronTarget {
  /** "" or "src/": Next looks for the instrumentation file next to app/. */
  base: string;
  typescript: boolean;
  /** The module the instrumentation file imports startDevCron from ("durable-next/next", "./lib/durable/next"). */
  next: string;
}

/**
 * Starts the local cron under `next dev` from the app's instrumentation file: a new file when
 * there is none; one the record says the tool wrote, still exactly as written, gets this version's
 * text (`recorded`: the tool's record, manifest.ts); any other is the app's, so the lines to add are
 * printed instead.
 */
export function addDevCron(
  target: string,
  { base, typescript, next }: DevCronTarget,
  dryRun: boolean,
  recorded: FileHashes = {},
): ConfigChange {
  const existing = INSTRUMENTATION_NAMES.map((name) => base + name).find((rel) => existsSync(path.join(target, rel)));
  const text = instrumentationFile(next);
  if (!existing) {
    const rel = `${base}instrumentation.${typescript ? "ts" : "js"}`;
    if (!dryRun) writeFileSync(path.join(target, rel), text, { flag: "wx" });
    const note = "starts a local cron under next dev (ticks at each wake time, at least every 5 s)";
    return { file: rel, outcome: "created", note };
  }
  const current = readFileSync(path.join(target, existing), "utf8");
  if (!sameText(current, text) && recorded[existing] === sha256(current)) {
    if (!dryRun) writeFileSync(path.join(target, existing), text);
    return {
      file: existing,
      outcome: "updated",
      note: "written by an earlier init, unchanged since: now this version's text",
    };
  }
  if (current.includes("startDevCron")) {
    return { file: existing, outcome: "unchanged", note: "already starts the local cron" };
  }
  return {
    file: existing,
    outcome: "manual",
    note: `is your app's: so that runs tick under next dev, add to its register():\n    ${devCronCall(next)}`,
  };
}
