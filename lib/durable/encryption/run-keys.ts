import type { ProjectKey } from "./keys";

// Per-run keys: HKDF-SHA-256 from the project key, the run id as `info`, 64 bytes split into an
// AES-256-GCM key and an HMAC-SHA-256 key (the nonce is derived from the plaintext under it:
// payload-codec.ts). WebCrypto only, so the same code runs on Node and the Edge runtime.

/** The two keys of one run under one project key. */
export interface RunKeys {
  cipher: CryptoKey;
  mac: CryptoKey;
}

const SALT = new TextEncoder().encode("durable-next encryption v1");
const utf8 = new TextEncoder();
/** How many runs' keys a process keeps (a run's steps reuse its keys; the oldest go first). */
const CACHED_RUNS = 4096;

/** Derives and caches the keys of each run, for a set of project keys. */
export class RunKeyring {
  private readonly masters = new Map<string, Promise<CryptoKey>>();
  private readonly runs = new Map<string, Promise<RunKeys>>();
  constructor(private readonly keys: readonly ProjectKey[]) {}

  /** The project key with this id, or undefined. */
  key(id: string): ProjectKey | undefined {
    return this.keys.find((key) => key.id === id);
  }

  /** The keys of run `scope` under project key `key`. */
  forRun(key: ProjectKey, scope: string): Promise<RunKeys> {
    const name = `${key.id}\u0000${scope}`;
    const cached = this.runs.get(name);
    if (cached) {
      this.runs.delete(name);
      this.runs.set(name, cached);
      return cached;
    }
    const derived = this.derive(key, scope);
    derived.catch(() => this.runs.delete(name));
    this.runs.set(name, derived);
    if (this.runs.size > CACHED_RUNS) this.runs.delete(this.runs.keys().next().value!);
    return derived;
  }

  private async derive(key: ProjectKey, scope: string): Promise<RunKeys> {
    const master = await this.master(key);
    const bits = await crypto.subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: SALT, info: utf8.encode(scope) },
      master,
      512,
    );
    const [cipherBytes, macBytes] = [bits.slice(0, 32), bits.slice(32)];
    const [cipher, mac] = await Promise.all([
      crypto.subtle.importKey("raw", cipherBytes, "AES-GCM", false, ["encrypt", "decrypt"]),
      crypto.subtle.importKey("raw", macBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
    ]);
    return { cipher, mac };
  }

  private master(key: ProjectKey): Promise<CryptoKey> {
    let master = this.masters.get(key.id);
    if (!master) {
      master = crypto.subtle.importKey("raw", key.secret as Uint8Array<ArrayBuffer>, "HKDF", false, ["deriveBits"]);
      this.masters.set(key.id, master);
    }
    return master;
  }
}
