import { fromBase64, toBase64 } from "./base64";

// An envelope is one string, so it can stand wherever a stored value or a text does: a jsonb value,
// inside an object a SQL function builds, a text parameter (a cancel reason), or even inside a
// message a SQL function formats around it (docs/guide/encryption.md, "What is stored"):
//
//   $denc1.<key id>.<scope>.<nonce>.<ciphertext>
//
// `1` the version; the key id of the project key; the scope, the run id whose key sealed it
// (base64url of its UTF-8), so a value a SQL function copies from a child run into its parent's
// receipt still opens; a 12-byte nonce and the AES-256-GCM ciphertext with its tag, base64url.
// The version, key id and scope are the additional data the tag authenticates.

/** What every envelope starts with. A plain value may not contain it (payload-codec.ts). */
export const ENVELOPE_PREFIX = "$denc1.";

const PART = "[A-Za-z0-9_-]";
const BODY = `\\$denc1\\.(${PART}{1,32})\\.(${PART}*)\\.(${PART}{16})\\.(${PART}{22,})`;
const WHOLE = new RegExp(`^${BODY}$`);

/** The envelopes inside a longer text (a message a SQL function formatted around one). */
export const ENVELOPES_IN_TEXT = new RegExp(BODY, "g");

export interface Envelope {
  keyId: string;
  scope: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
  /** The bytes the tag authenticates besides the ciphertext: version, key id and scope. */
  header: Uint8Array;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The authenticated header of an envelope of `scope` under key `keyId`. */
export function envelopeHeader(keyId: string, scope: string): string {
  return `${ENVELOPE_PREFIX}${keyId}.${toBase64(utf8.encode(scope), true)}`;
}

/** The envelope text of a sealed value. */
export function formatEnvelope(header: string, nonce: Uint8Array, ciphertext: Uint8Array): string {
  return `${header}.${toBase64(nonce, true)}.${toBase64(ciphertext, true)}`;
}

/** The parts of an envelope, or undefined when `text` is not exactly one. */
export function parseEnvelope(text: string): Envelope | undefined {
  const match = WHOLE.exec(text);
  if (!match) return undefined;
  try {
    const [, keyId, scope] = match;
    return {
      keyId: keyId!,
      scope: fromUtf8.decode(fromBase64(scope!)),
      nonce: fromBase64(match[3]!),
      ciphertext: fromBase64(match[4]!),
      header: utf8.encode(text.slice(0, text.lastIndexOf(".", text.lastIndexOf(".") - 1))),
    };
  } catch {
    return undefined;
  }
}
