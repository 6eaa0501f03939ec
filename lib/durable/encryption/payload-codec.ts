import { DecryptionError, InvalidInputError } from "../errors";
import { ENVELOPE_PREFIX, ENVELOPES_IN_TEXT, envelopeHeader, formatEnvelope, parseEnvelope } from "./envelope";
import { checkEncryptionKeys, type EncryptionOptions, type ProjectKey } from "./keys";
import { RunKeyring } from "./run-keys";

/**
 * What stands between a value and its column (docs/guide/encryption.md): with a sealing key, every
 * payload becomes an envelope (envelope.ts) under its run's key; without one, values are stored as
 * they are. Either way, reading opens every envelope a stored value holds, wherever it sits.
 */
export interface PayloadCodec {
  /** Whether values are sealed when written (a key that is not decrypt-only is configured). */
  readonly seals: boolean;
  /**
   * The JSON text to store for a value of run `runId`, given the value's JSON text: an envelope's
   * JSON string when sealing, else `json` itself.
   * @throws InvalidInputError when not sealing and `json` contains the envelope prefix
   */
  sealJson(runId: string, json: string): Promise<string>;
  /** Free text of run `runId` as stored (an error message, a cancel reason). */
  sealText(runId: string, text: string): Promise<string>;
  /**
   * `value` with every envelope in it opened: a whole string that is an envelope becomes the
   * value sealed in it; an envelope inside a longer string becomes its text. Returns `value`
   * itself when it holds none.
   * @throws DecryptionError naming the key id when an envelope cannot be opened
   */
  open<T>(value: T): Promise<T>;
}

// Values at least this long are deflated before sealing, and kept deflated when that is smaller.
const COMPRESS_FROM = 256;
// Values at least this long are first probed: their first PROBE_BYTES deflated (worthDeflating).
const PROBE_FROM = 16 * 1024;
const PROBE_BYTES = 4 * 1024;
/**
 * Node's zlib when the runtime has it (process.getBuiltinModule, Node 20.16 and later): the same raw
 * deflate as CompressionStream's, without a stream per value, which costs ten times more for a
 * small one (docs/performance.md, "Encryption at rest"). Elsewhere (the Edge runtime) the streams.
 */
type Runtime = { process?: { getBuiltinModule?: (id: string) => unknown } };
const zlib = (globalThis as Runtime).process?.getBuiltinModule?.("node:zlib") as typeof import("node:zlib") | undefined;
const RAW = 0;
const DEFLATED = 1;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** The codec for `encryption` (createDurable's option), or the plain one when it is undefined. */
export function createPayloadCodec(encryption?: EncryptionOptions): PayloadCodec {
  const keys = encryption === undefined ? [] : checkEncryptionKeys(encryption.keys);
  const keyring = new RunKeyring(keys);
  const sealing = keys.find((key) => !key.decryptOnly);
  const open = <T>(value: T): Promise<T> =>
    holdsEnvelope(value) ? (openValue(keyring, value) as Promise<T>) : Promise.resolve(value);
  if (!sealing) {
    return {
      seals: false,
      sealJson: async (_runId, json) => refusePrefix(json),
      sealText: async (_runId, text) => text.replaceAll(ENVELOPE_PREFIX, "\uFF04denc1."),
      open,
    };
  }
  const seal = (runId: string, json: string) => sealBytes(keyring, sealing, runId, utf8.encode(json));
  return {
    seals: true,
    sealJson: async (runId, json) => JSON.stringify(await seal(runId, json)),
    sealText: (runId, text) => seal(runId, JSON.stringify(text)),
    open,
  };
}

/** Whether any string in `value` (at any depth) holds an envelope. */
export function holdsEnvelope(value: unknown): boolean {
  if (typeof value === "string") return value.includes(ENVELOPE_PREFIX);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(holdsEnvelope);
  for (const key in value) {
    if (holdsEnvelope((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function refusePrefix(json: string): string {
  if (json.includes(ENVELOPE_PREFIX)) {
    throw new InvalidInputError(
      `a value contains the text "${ENVELOPE_PREFIX}", which marks an encrypted payload: ` +
        "without an encryption key it cannot be stored",
    );
  }
  return json;
}

async function sealBytes(keyring: RunKeyring, key: ProjectKey, runId: string, plain: Uint8Array): Promise<string> {
  const body = await withCompression(plain);
  const { cipher, mac } = await keyring.forRun(key, runId);
  // A synthetic nonce (the plaintext's HMAC under the run's own key): equal values of one run seal
  // to equal envelopes, so the SQL that compares stored inputs (a child's replayed start) still
  // can, and a nonce repeats only with the same plaintext, which GCM tolerates.
  const nonce = new Uint8Array(await crypto.subtle.sign("HMAC", mac, body)).slice(0, 12);
  const header = envelopeHeader(key.id, runId);
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: utf8.encode(header) },
    cipher,
    body,
  );
  return formatEnvelope(header, nonce, new Uint8Array(ciphertext));
}

async function withCompression(plain: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  if (plain.length >= COMPRESS_FROM && (await worthDeflating(plain))) {
    const deflated = await deflate(plain);
    if (deflated.length < plain.length) return prefixed(DEFLATED, deflated);
  }
  return prefixed(RAW, plain);
}

/**
 * Whether deflating is worth its cost: a large value whose first 4 KiB do not shrink by a tenth
 * (random bytes, base64 of a file, ciphertext) is sealed as it is, saving a deflate of the whole
 * (about 1 ms for 64 KiB). It reads only the plaintext, so every runtime decides alike.
 */
async function worthDeflating(plain: Uint8Array): Promise<boolean> {
  if (plain.length < PROBE_FROM) return true;
  const probe = await deflate(plain.subarray(0, PROBE_BYTES));
  return probe.length < PROBE_BYTES * 0.9;
}

function deflate(bytes: Uint8Array): Promise<Uint8Array> | Uint8Array {
  return zlib ? zlib.deflateRawSync(bytes) : pipe(bytes, new CompressionStream("deflate-raw"));
}

function inflate(bytes: Uint8Array): Promise<Uint8Array> | Uint8Array {
  return zlib ? zlib.inflateRawSync(bytes) : pipe(bytes, new DecompressionStream("deflate-raw"));
}

function prefixed(flag: number, bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const body = new Uint8Array(bytes.length + 1);
  body[0] = flag;
  body.set(bytes, 1);
  return body;
}

async function pipe(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const piped = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(piped).arrayBuffer());
}

async function openValue(keyring: RunKeyring, value: unknown): Promise<unknown> {
  if (typeof value === "string") return openString(keyring, value);
  if (value === null || typeof value !== "object" || !holdsEnvelope(value)) return value;
  if (Array.isArray(value)) return Promise.all(value.map((item) => openValue(keyring, item)));
  const entries = await Promise.all(
    Object.entries(value).map(async ([key, item]) => [key, await openValue(keyring, item)] as const),
  );
  return Object.fromEntries(entries);
}

async function openString(keyring: RunKeyring, text: string): Promise<unknown> {
  if (!text.includes(ENVELOPE_PREFIX)) return text;
  if (parseEnvelope(text)) return JSON.parse(await openEnvelope(keyring, text));
  const opened = await Promise.all([...text.matchAll(ENVELOPES_IN_TEXT)].map((m) => openEnvelope(keyring, m[0])));
  let index = 0;
  return text.replace(ENVELOPES_IN_TEXT, () => {
    const value: unknown = JSON.parse(opened[index++]!);
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

/** The JSON text sealed in one envelope. */
async function openEnvelope(keyring: RunKeyring, text: string): Promise<string> {
  const envelope = parseEnvelope(text)!;
  const key = keyring.key(envelope.keyId);
  if (!key) throw new DecryptionError({ keyId: envelope.keyId, reason: "missing_key" });
  const { cipher } = await keyring.forRun(key, envelope.scope);
  let body: Uint8Array;
  try {
    const iv = envelope.nonce as Uint8Array<ArrayBuffer>;
    const data = envelope.ciphertext as Uint8Array<ArrayBuffer>;
    const additionalData = envelope.header as Uint8Array<ArrayBuffer>;
    body = new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, cipher, data));
  } catch (cause) {
    throw new DecryptionError({ keyId: envelope.keyId, reason: "unreadable" }, { cause });
  }
  const bytes = body[0] === DEFLATED ? await inflate(body.subarray(1)) : body.subarray(1);
  return fromUtf8.decode(bytes);
}
