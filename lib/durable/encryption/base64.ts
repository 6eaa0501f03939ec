// Base64 with the Web platform's atob/btoa only, so the same code runs on Node, the Edge runtime
// and in the browser bundle's absence of Buffer. Envelopes use the URL-safe alphabet without padding.

const CHUNK = 0x8000;

/** Bytes as base64 (`url`: the URL-safe alphabet, no padding). */
export function toBase64(bytes: Uint8Array, url = false): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  const text = btoa(binary);
  return url ? text.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "") : text;
}

/** The bytes of base64 text, either alphabet, padded or not. @throws DOMException on a bad character */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
