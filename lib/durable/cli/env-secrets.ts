// The secrets an app already has, so the tools never print fresh values over them: a new
// DURABLE_SECRET pasted over the old one would break every status link and callback URL handed
// out, a new DURABLE_SIGNAL_SECRET every sender's signatures (docs/guide/installing.md, "What init
// prints"). Looked for in the env files Next.js loads and in the environment the tool runs in.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** The secrets the routes need (docs/guide/deploying-to-vercel.md). */
export const SECRET_NAMES = ["DURABLE_SECRET", "CRON_SECRET", "DURABLE_SIGNAL_SECRET"] as const;
export type SecretEnvName = (typeof SECRET_NAMES)[number];

/** The env files Next.js loads, in the order they are looked at. */
export const ENV_FILES = [
  ".env",
  ".env.local",
  ".env.development",
  ".env.development.local",
  ".env.production",
  ".env.production.local",
];

/** Whether `text` (an env file) gives `name` a non-empty value: `NAME=value`, `export NAME="value"`. */
function assigns(text: string, name: string): boolean {
  const line = new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=\\s*(.*)$`, "m").exec(text);
  const value =
    line?.[1]
      ?.replace(/\s+#.*$/, "")
      .trim()
      .replace(/^(["'`])(.*)\1$/, "$2") ?? "";
  return value !== "";
}

/** Each secret that is set, with where: the env files that set it, or "the environment". Never its value. */
export function existingSecrets(target: string, env: NodeJS.ProcessEnv = process.env): Map<SecretEnvName, string> {
  const texts = ENV_FILES.filter((file) => existsSync(path.join(target, file))).map(
    (file) => [file, readFileSync(path.join(target, file), "utf8")] as const,
  );
  const found = new Map<SecretEnvName, string>();
  for (const name of SECRET_NAMES) {
    const files = texts.filter(([, text]) => assigns(text, name)).map(([file]) => file);
    if (files.length > 0) found.set(name, files.join(", "));
    else if (env[name]) found.set(name, "the environment");
  }
  return found;
}
