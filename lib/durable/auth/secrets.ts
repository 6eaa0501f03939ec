/**
 * The three secrets (README, "HTTP routes"): `durable` (DURABLE_SECRET: admin bearer, derives status
 * tokens), `cron` (CRON_SECRET), `signal` (DURABLE_SIGNAL_SECRET, Standard Webhooks keys).
 * In production a missing secret is an error (routes answer 503 and log it once); in development
 * a fixed dev secret is used, with one loud warning per secret. A signal key without the `whsec_`
 * prefix is warned about once: it is read as bare base64, which a key copied from another place
 * (a password, a key of another format) also passes, and then no signature ever verifies.
 */
export type SecretName = "durable" | "cron" | "signal";

const ENV: Record<SecretName, string> = {
  durable: "DURABLE_SECRET",
  cron: "CRON_SECRET",
  signal: "DURABLE_SIGNAL_SECRET",
};
const DEV: Record<SecretName, string> = {
  durable: "dev-durable-secret",
  cron: "dev-cron-secret",
  // Standard Webhooks key: "whsec_" + base64 of the key bytes.
  signal: `whsec_${Buffer.from("dev-signal-secret-dev-signal-key").toString("base64")}`,
};
const warned = new Set<SecretName>();
let warnedPrefix = false;

export class MissingSecretError extends Error {
  constructor(readonly secret: SecretName) {
    super(`${ENV[secret]} is not set; refusing to run without it in production`);
    this.name = "MissingSecretError";
  }
}

export function resolveSecret(
  name: SecretName,
  given: string | undefined,
  log: (message: string) => void = console.warn,
): string {
  const value = given ?? process.env[ENV[name]];
  if (value) {
    if (name === "signal") warnUnprefixed(value, log);
    return value;
  }
  if (process.env.NODE_ENV === "production") throw new MissingSecretError(name);
  if (!warned.has(name)) {
    warned.add(name);
    log(
      `!!! ${ENV[name]} is not set: using the fixed development secret "${DEV[name]}". Set it before you deploy. !!!`,
    );
  }
  return DEV[name];
}

/** One warning, never the value: which of the comma-separated keys lacks the Standard Webhooks prefix. */
function warnUnprefixed(value: string, log: (message: string) => void) {
  if (warnedPrefix) return;
  const keys = value.split(",").map((key) => key.trim());
  const bare = keys.flatMap((key, i) => (key !== "" && !key.startsWith("whsec_") ? [`#${i + 1}`] : []));
  if (bare.length === 0) return;
  warnedPrefix = true;
  log(
    `${ENV.signal}: key ${bare.join(", ")} of ${keys.length} does not start with "whsec_"; it is read as bare ` +
      "base64. Use the whsec_… key your webhook sender shows (Standard Webhooks), or no signature will verify.",
  );
}

export const secretEnvName = (name: SecretName) => ENV[name];
