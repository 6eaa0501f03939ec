import { InvalidInputError } from "../errors";
import { fromBase64 } from "./base64";

/**
 * A project key for encryption at rest (docs/guide/encryption.md). `secret` is 32 bytes: base64
 * text (as `DURABLE_ENCRYPTION_KEYS` gives it) or the bytes. A `decryptOnly` key opens what was
 * sealed under it and never seals: the state of a key being retired.
 */
export interface EncryptionKey {
  id: string;
  secret: string | Uint8Array;
  decryptOnly?: boolean;
}

/** `createDurable({ encryption })`: the first key that is not decrypt-only seals; all of them open. */
export interface EncryptionOptions {
  keys: EncryptionKey[];
}

/** A key checked and decoded once. */
export interface ProjectKey {
  id: string;
  secret: Uint8Array;
  decryptOnly: boolean;
}

// A key id is written into every envelope, between dots: short, and no character the envelope uses.
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Comma-separated `id:base64secret` entries; `!` after an id marks a decrypt-only key. */
export const ENCRYPTION_KEYS_VARIABLE = "DURABLE_ENCRYPTION_KEYS";

/**
 * Parses `DURABLE_ENCRYPTION_KEYS`: `id:base64secret` pairs separated by commas, the first that is
 * not decrypt-only sealing. `old!:…` marks a decrypt-only key. Whitespace around entries is ignored.
 *
 * @throws InvalidInputError naming the entry (never its secret) when one is malformed
 *
 * @example
 * parseEncryptionKeys("k2:" + newSecret + ",k1!:" + oldSecret);
 * // [{ id: "k2", secret: newSecret }, { id: "k1", secret: oldSecret, decryptOnly: true }]
 */
export function parseEncryptionKeys(text: string): EncryptionKey[] {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  return entries.map((entry, index) => {
    const colon = entry.indexOf(":");
    if (colon < 0) {
      throw new InvalidInputError(`${ENCRYPTION_KEYS_VARIABLE}: entry ${index + 1} is not id:base64secret`);
    }
    const name = entry.slice(0, colon);
    const decryptOnly = name.endsWith("!");
    const id = decryptOnly ? name.slice(0, -1) : name;
    return { id, secret: entry.slice(colon + 1), ...(decryptOnly ? { decryptOnly } : {}) };
  });
}

/**
 * Checks the keys and decodes their secrets. Ids are unique, match `[A-Za-z0-9_-]{1,32}`, and each
 * secret is exactly 32 bytes. Errors name the key id, never the secret.
 *
 * @throws InvalidInputError when the list is empty or a key is malformed
 */
export function checkEncryptionKeys(keys: readonly EncryptionKey[]): ProjectKey[] {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new InvalidInputError("encryption.keys must list at least one key");
  }
  const seen = new Set<string>();
  return keys.map((key, index) => {
    const id = (key as Partial<EncryptionKey> | null)?.id;
    if (typeof id !== "string" || !KEY_ID.test(id)) {
      throw new InvalidInputError(`encryption key ${index + 1}: its id must match [A-Za-z0-9_-]{1,32}`);
    }
    if (seen.has(id)) throw new InvalidInputError(`encryption key "${id}" is listed twice`);
    seen.add(id);
    return { id, secret: decodeSecret(id, key.secret), decryptOnly: key.decryptOnly === true };
  });
}

function decodeSecret(id: string, secret: unknown): Uint8Array {
  let bytes: Uint8Array | undefined;
  if (secret instanceof Uint8Array) bytes = new Uint8Array(secret);
  else if (typeof secret === "string" && BASE64.test(secret.trim())) {
    bytes = fromBase64(secret.trim());
  }
  if (bytes?.length !== 32) {
    throw new InvalidInputError(`encryption key "${id}": the secret must be 32 bytes, given as base64 or bytes`);
  }
  return bytes;
}
