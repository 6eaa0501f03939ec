// What the built-in event sources share: their secret, resolved at each delivery (so a missing one
// is a 503 at the request, never a crash at import or build), and the body read as JSON.
import { HttpRefusal } from "../routes/route-context";
import type { InboundVerdict, SourceSecret } from "./types";

export interface SecretOptions<T> {
  /** The source's words in messages: "Stripe". */
  label: string;
  /** The secret given in code; undefined reads `envName` at each delivery. */
  given: SourceSecret | undefined;
  envName?: string;
  /** Parses the secret into what the verifier takes, or throws saying what is wrong with it. */
  parse: (secret: SourceSecret) => T;
}

/**
 * A function that answers the source's parsed secrets at each delivery. Unset (no secret given and
 * none in the environment): 503 `secret_missing`, as a route secret unset in production; a secret
 * the scheme cannot use: 503 `misconfigured`. Either way no delivery is ever accepted unsigned.
 */
export function sourceSecrets<T>(options: SecretOptions<T>): () => T {
  let parsedFrom: SourceSecret | undefined;
  let parsed: T | undefined;
  return () => {
    const secret = options.given ?? (options.envName ? process.env[options.envName] : undefined);
    const unset = secret === undefined || (typeof secret === "string" && secret.trim() === "");
    if (unset) {
      const missing = options.envName ? `${options.envName} is not set` : `no secret was given`;
      throw new HttpRefusal(503, "secret_missing", `${missing}: the ${options.label} source refuses every delivery`);
    }
    if (secret !== parsedFrom) {
      try {
        parsed = options.parse(secret);
      } catch (e) {
        throw new HttpRefusal(503, "misconfigured", `the ${options.label} secret is unusable: ${(e as Error).message}`);
      }
      parsedFrom = secret;
    }
    return parsed as T;
  };
}

/** A refusal: 401 for a delivery that is not authentic, 400 for one that cannot be published. */
export const refuse = (status: 400 | 401, reason: string): InboundVerdict => ({ ok: false, status, reason });

/** The body as UTF-8 JSON, or undefined when it is not (a refusal the caller words). */
export function bodyJson(body: Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body)) };
  } catch {
    return undefined;
  }
}

/** The value at `key` of a JSON object, when it is a non-empty string. */
export function stringField(value: unknown, key: string): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const field = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  return typeof field === "string" && field.length > 0 ? field : undefined;
}
