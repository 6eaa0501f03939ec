/**
 * The three secrets (README, "HTTP routes"): `durable` (DURABLE_SECRET: admin bearer, derives status
 * tokens), `cron` (CRON_SECRET), `signal` (DURABLE_SIGNAL_SECRET, Standard Webhooks keys).
 * In production a missing secret is an error (routes answer 503); in development a fixed dev
 * secret is used, with one loud warning per secret.
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
  if (value) return value;
  if (process.env.NODE_ENV === "production") throw new MissingSecretError(name);
  if (!warned.has(name)) {
    warned.add(name);
    log(
      `!!! ${ENV[name]} is not set: using the fixed development secret "${DEV[name]}". Set it before you deploy. !!!`,
    );
  }
  return DEV[name];
}

export const secretEnvName = (name: SecretName) => ENV[name];
